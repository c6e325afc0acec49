"""Shared machinery of the e2e tests: a sandbox of their own (scripts/sandbox.sh with a
unique prefix, torn down on every exit path), the router started in it, its telemetry, and
a small checker that collects failures instead of stopping at the first.

Binaries come from the environment (meson passes them): RINGWAY, RINGWAY_PLAN; SANDBOX is
scripts/sandbox.sh. RINGWAY_E2E_PORT picks the router's port: af_packet (default;
net_af_packet, DPDK alone owns the router address) or af_xdp (net_af_xdp with ringway's XDP
steering program; the router namespace's kernel holds the address and gets everything that
is not ringway's memcached UDP). Exit status: 0 pass, 1 fail, 77 skip (not root / no
namespaces).
"""
import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))

from mcudp import TcpClient, Timeout, UdpClient  # noqa: E402,F401
from nsutil import socket_in  # noqa: E402,F401

TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
SANDBOX = os.environ.get("SANDBOX", os.path.join(TOP, "scripts", "sandbox.sh"))
SKIP = 77
PORT = os.environ.get("RINGWAY_E2E_PORT", "af_packet")
if PORT not in ("af_packet", "af_xdp"):
    raise SystemExit("RINGWAY_E2E_PORT must be af_packet or af_xdp, not %r" % PORT)
# DPDK 22.11's AF_XDP PMD sizes queue_count by the interface's *combined* channels; a veth
# reports separate rx/tx channels, so on the sandbox's veth it opens one queue: one worker.
XDP_VETH_QUEUES = 1


def log(*a):
    print(*a, flush=True)


class Checker:
    """Collects failed expectations; finish() prints a summary and exits."""

    def __init__(self, name):
        self.name = name
        self.failures = []
        self.passes = 0

    def ok(self, cond, what):
        if cond:
            self.passes += 1
            log("ok   - %s" % what)
        else:
            self.failures.append(what)
            log("FAIL - %s" % what)
        return cond

    def eq(self, got, want, what):
        return self.ok(got == want, "%s (got %r, want %r)" % (what, _short(got), _short(want))
                       if got != want else what)

    def finish(self):
        log("%s: %d passed, %d failed" % (self.name, self.passes, len(self.failures)))
        for f in self.failures:
            log("  failed: %s" % f)
        return 0 if not self.failures and self.passes else 1


def _short(v):
    r = repr(v)
    return v if len(r) < 200 else r[:200] + "..."


def need_root():
    if os.geteuid() != 0:
        log("SKIP: e2e tests need root (network namespaces)")
        sys.exit(SKIP)


def remove_dpdk_runtime(prefix):
    """Remove the DPDK runtime folder of a process that ran with --file-prefix `prefix` (the
    sandbox's router folder goes with `sandbox.sh down`)."""
    import shutil
    shutil.rmtree(os.path.join("/var/run/dpdk", prefix), ignore_errors=True)


def binary(var, rel):
    path = os.environ.get(var) or os.path.join(TOP, "build", rel)
    if not os.access(path, os.X_OK):
        log("FAIL: %s not built (%s); set %s" % (rel, path, var))
        sys.exit(1)
    return path


def telemetry(sock_path, cmd, timeout=3.0):
    """One DPDK telemetry v2 command: connect, read the greeting, send, parse the reply."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(sock_path)
        greeting = json.loads(s.recv(1 << 16).decode())
        s.send(cmd.encode())
        buf = s.recv(greeting.get("max_output_len", 16384) + 1024)
        return json.loads(buf.decode())
    finally:
        s.close()


class Sandbox:
    """One sandbox (unique prefix), up for the life of the object; down on exit, on
    SIGTERM/SIGINT (meson's timeout) and on any exception."""

    def __init__(self, tag, nodes=4, no_huge=False, port=None, routed=False, vlan=0,
                 two_ports=False, ipv6=False, routers=1):
        self.port = port or PORT
        self.xdp = self.port == "af_xdp"
        self.prefix = ("e%s%s%d" % (tag, "x" if self.xdp else "", os.getpid() % 100000))[:12]
        self.nodes = nodes
        self.env = {}
        self.router_running = False
        args = [SANDBOX, "up", "--nodes", str(nodes), "--prefix", self.prefix]
        if no_huge:
            args.append("--no-huge")
        if routed:
            args.append("--routed")  # nodes (and a remote client) behind a gateway
        if vlan:
            args += ["--vlan", str(vlan)]  # the segment's frames tagged on the wire
        if two_ports:
            args.append("--two-ports")  # the nodes on the router's second port
        if ipv6:
            args.append("--ipv6")  # IPv6 addresses too (2001:2::/48), nodes on both families
        if routers > 1:
            args += ["--routers", str(routers)]  # routers 2..R at 198.18.0.2.. (`down` stops them)
        atexit.register(self.down)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        subprocess.run(args, check=True)
        self.env = self._read_env(os.path.join("/run/ringway-sandbox", self.prefix, "env"))
        self.state = self.env["STATE_DIR"]
        self.router = (self.env["ROUTER_IP"], int(self.env["MC_PORT"]))
        self.node_ips = [self.env["NODE%d_IP" % i] for i in range(1, nodes + 1)]
        self.client_ns = self.env["NS_CLIENT"]
        if ipv6:
            self.router6 = (self.env["ROUTER_IP6"], int(self.env["MC_PORT"]))
            self.node_ips6 = [self.env["NODE%d_IP6" % i] for i in range(1, nodes + 1)]

    @staticmethod
    def _read_env(path):
        env = {}
        with open(path) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                if k:
                    env[k] = v.strip("'\"")
        return env

    def _on_signal(self, signum, _frame):
        self.down()
        sys.exit(128 + signum)

    def down(self):
        if getattr(self, "_down", False):
            return
        self._down = True
        if self.router_running:
            self.stop_router()
        subprocess.run([SANDBOX, "down", "--prefix", self.prefix], check=False)

    # ---- the router

    def config(self, algo="ring", extra="", request_ms=1000, family=None):
        """Write this sandbox's ringway.conf (plus `extra` INI text) and return its path.
        family (an `ipv6=True` sandbox): "ipv6", "ipv6-nodes" or "ipv6-clients" (see
        `sandbox.sh config`)."""
        args = [SANDBOX, "config", "--prefix", self.prefix, "--algo", algo,
                "--request-ms", str(request_ms)]
        if family:
            args.append("--" + family)
        text = subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout.decode()
        path = os.path.join(self.state, "ringway.conf")
        with open(path, "w") as f:
            f.write(text + extra)
        return path

    def start_router(self, ringway, conf, lcores="0-1", qpairs=1, af_packet_args=None):
        """lcores: EAL -l list or --lcores map (the first lcore is the control lcore);
        qpairs: af_packet queue pairs, one worker each (2 workers: lcores "0@0,1@1,2@1");
        af_packet_args: the PMD's ring arguments instead of framecnt=4096 (e.g. a framesz).
        In af_xdp mode the veth gives one queue (XDP_VETH_QUEUES): one worker on "0-1"."""
        env = dict(os.environ, SANDBOX_PORT=self.port,
                   SANDBOX_AF_PACKET_ARGS="qpairs=%d,%s" % (qpairs,
                                                            af_packet_args or "framecnt=4096"))
        if self.xdp and qpairs > XDP_VETH_QUEUES:
            log("af_xdp on a veth: %d queue(s), so %d worker(s) instead of %d"
                % (XDP_VETH_QUEUES, XDP_VETH_QUEUES, qpairs))
            qpairs, lcores = XDP_VETH_QUEUES, "0-1"
        if self.xdp and qpairs > 1:
            env["SANDBOX_AF_XDP_ARGS"] = "queue_count=%d" % qpairs
        subprocess.run([SANDBOX, "router-start", "--prefix", self.prefix, "--ringway", ringway,
                        "--config", conf, "--lcores", lcores], check=True, env=env)
        self.workers = qpairs
        self.router_running = True
        self.tsock = "/var/run/dpdk/%s/dpdk_telemetry.v2" % self.env["FILE_PREFIX"]

    def stop_router(self):
        """Stop the router (SIGINT); its log, with the counters printed at exit."""
        self.router_running = False
        r = subprocess.run([SANDBOX, "router-stop", "--prefix", self.prefix],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.router_exit_log = r.stdout.decode(errors="replace")
        return self.router_exit_log

    def router_alive(self):
        try:
            with open(os.path.join(self.state, "router.pid")) as f:
                os.kill(int(f.read()), 0)
            return True
        except (OSError, ValueError):
            return False

    def router_log(self):
        with open(os.path.join(self.state, "router.log"), errors="replace") as f:
            return f.read()

    def telemetry(self, cmd):
        return telemetry(self.tsock, cmd)

    def stats(self):
        """The router's /ringway/stats, flattened: totals plus 'drops' {reason: n}."""
        return flatten_stats(self.telemetry("/ringway/stats"))

    def steer(self):
        """af_xdp mode: the XDP program's decision counters (/ringway/steer), {name: n}."""
        r = self.telemetry("/ringway/steer")
        body = r.get("/ringway/steer", r)
        if not isinstance(body, dict):
            raise ValueError("no counters in /ringway/steer: %r" % (r,))
        return {k: v for k, v in body.items() if isinstance(v, int)}

    def xdp_prog(self):
        """'id N name NAME' of the XDP program on the router's veth0 (ip -d link), or None."""
        out = subprocess.run(["ip", "-n", self.env["NS_ROUTER"], "-d", "link", "show", "dev",
                              self.env["ROUTER_IF"]], stdout=subprocess.PIPE,
                             check=True).stdout.decode()
        for line in out.splitlines():
            parts = line.split()
            if parts[:1] == ["prog/xdp"]:
                return " ".join(parts[1:5])
        return None

    def nodes_view(self):
        return self.telemetry("/ringway/nodes")

    def wait_serving(self, timeout=10.0):
        """Until a get for a key on every node comes back through the router (the router
        has resolved every node's MAC). Returns True when it does."""
        c = self.client(timeout=0.3)
        end = time.monotonic() + timeout
        pending = set(range(1, self.nodes + 1))
        i = 0
        try:
            while pending and time.monotonic() < end:
                i += 1
                try:
                    c.request(b"get warmup:%d\r\n" % i)
                except (Timeout, ConnectionRefusedError):
                    # af_xdp: an ICMP port unreachable from the router namespace's kernel
                    # for a datagram sent before ringway's program was attached.
                    time.sleep(0.1)
                    continue
                # A key answered means its node is reachable; check the rest via telemetry.
                try:
                    known = nodes_mac_known(self.nodes_view())
                    if known is not None and known >= self.nodes:
                        pending.clear()
                except (OSError, ValueError):
                    pass
                if i > 4 * self.nodes + 50 and not pending:
                    break
            return not pending
        finally:
            c.close()

    # ---- clients

    def client(self, timeout=2.0, bind=None):
        return UdpClient(self.router, ns=self.client_ns, bind=bind, timeout=timeout)

    def client6(self, timeout=2.0, bind=None, ns=None):
        """A UDP client of the router's IPv6 address (from the client namespace)."""
        return UdpClient(self.router6, ns=ns or self.client_ns, bind=bind, timeout=timeout)

    def node_tcp6(self, i):
        """A TCP connection to node i's IPv6 address from its own namespace (reachable in
        every topology, two ports included)."""
        return TcpClient((self.node_ips6[i - 1], int(self.env["MC_PORT"])),
                         ns=self.env["NODE%d_NS" % i])

    def node_udp(self, i, timeout=2.0):
        return UdpClient((self.node_ips[i - 1], int(self.env["MC_PORT"])), ns=self.client_ns,
                         timeout=timeout)

    def node_tcp(self, i):
        return TcpClient((self.node_ips[i - 1], int(self.env["MC_PORT"])), ns=self.client_ns)

    def nodes_alive(self):
        ok = True
        for i in range(1, self.nodes + 1):
            try:
                t = self.node_tcp(i)
                t.stats()
                t.close()
            except OSError:
                ok = False
        return ok


# ---- telemetry shapes (DPDK 22.11 telemetry dicts are flat)


def flatten_stats(reply):
    """{'rx', 'forwarded', 'returned', 'answered', 'dropped', ..., 'drops': {reason: n}} from
    the reply to /ringway/stats: a flat dict of the totals over all workers, drop reasons as
    drop_<reason>."""
    body = reply.get("/ringway/stats", reply)
    if not isinstance(body, dict) or "rx" not in body:
        raise ValueError("no totals in /ringway/stats: %r" % (reply,))
    out = {k: v for k, v in body.items() if isinstance(v, int) and not k.startswith("drop_")}
    out["drops"] = {k[5:]: v for k, v in body.items()
                    if k.startswith("drop_") and isinstance(v, int) and v}
    return out


def nodes_list(reply):
    """[{name, address, mac_known, forwarded, returned, ...}] from /ringway/nodes, whose
    fields come as node<i>_<field>."""
    body = reply.get("/ringway/nodes", reply) or {}  # null: the callback failed this once
    nodes = {}
    for k, v in body.items():
        if k.startswith("node") and "_" in k:
            idx, _, field = k[4:].partition("_")
            if idx.isdigit():
                nodes.setdefault(int(idx), {})[field] = v
    return [nodes[i] for i in sorted(nodes)]


def nodes_mac_known(reply):
    body = reply.get("/ringway/nodes", reply) or {}
    if isinstance(body.get("mac_known"), int):
        return body["mac_known"]
    return sum(1 for n in nodes_list(reply) if n.get("mac_known"))


def identity(s):
    """(holds, text): rx = forwarded + returned + answered + dropped + probe_replies (nodes'
    answers to the router's own probes) + warm_absorbed (new owners' misses a warm-up read
    took to the previous owner) + ip_fragments_merged and ip_fragments_held (IP fragments
    merged into a datagram that went on, or waiting for theirs), and the drop reasons add up
    to dropped."""
    rhs = s["forwarded"] + s["returned"] + s["answered"] + s["dropped"] + \
        s.get("probe_replies", 0) + s.get("warm_absorbed", 0) + \
        s.get("ip_fragments_merged", 0) + s.get("ip_fragments_held", 0)
    by_reason = sum(s["drops"].values())
    text = "rx %d = forwarded %d + returned %d + answered %d + dropped %d + probe replies " \
        "%d + warm absorbed %d (= %d); drop reasons sum %d" % (
            s["rx"], s["forwarded"], s["returned"], s["answered"], s["dropped"],
            s.get("probe_replies", 0), s.get("warm_absorbed", 0), rhs, by_reason)
    return s["rx"] == rhs and by_reason == s["dropped"], text


def settled_stats(sb, wait=2.0):
    """Stats once they stop moving (no packet in flight between workers)."""
    prev = sb.stats()
    end = time.monotonic() + wait
    while time.monotonic() < end:
        time.sleep(0.2)
        cur = sb.stats()
        if _quiet(cur) == _quiet(prev):
            return cur
        prev = cur
    return prev


def _quiet(s):
    """The counters that move only with packets (not with idle polling)."""
    return {k: v for k, v in s.items() if k not in ("polls", "idle_polls")}


def check_identity(t, sb):
    s = settled_stats(sb)
    holds, text = identity(s)
    t.ok(holds, "packet accounting identity: " + text)
    return s


def delta(a, b):
    """b - a for the totals and the drop reasons."""
    d = {k: b[k] - a.get(k, 0) for k in b if k != "drops"}
    d["drops"] = {k: v - a["drops"].get(k, 0) for k, v in b["drops"].items()
                  if v != a["drops"].get(k, 0)}
    return d


def own_drops(drops):
    """Drop reasons that speak of traffic meant for the router. 'not_for_us' is left out: the
    sandbox's bridge floods a unicast frame to every port while its MAC table has no entry
    for the destination (first frames, aged entries), so the router's port sees frames for
    other hosts now and then, and correctly drops them. Every other reason stays."""
    return {k: v for k, v in drops.items() if k != "not_for_us"}


def freeze(pid, timeout=2.0):
    """SIGSTOP a process (a memcached node) and wait until every thread of it is stopped:
    kill() returns before the signal takes effect, and a node that still answers for a
    moment spoils a test that needs it silent (more likely on the faster AF_XDP path)."""
    os.kill(pid, signal.SIGSTOP)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            states = []
            for tid in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            return
        if states and all(st in ("T", "t") for st in states):
            return
        time.sleep(0.005)


def plan_assign(plan_bin, nodes_file, algo, keys):
    """{key: node name} from `ringway-plan assign` for the keys (bytes)."""
    path = nodes_file + ".keys"
    with open(path, "wb") as f:
        f.write(b"".join(k + b"\n" for k in keys))
    r = subprocess.run([plan_bin, "assign", "--nodes", nodes_file, "--algo", algo,
                        "--keys", path], check=True, stdout=subprocess.PIPE)
    out = {}
    for line in r.stdout.decode().splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.startswith("#"):
            out[parts[0].encode()] = parts[1]
    return out


def owner_by_router(sb, key, value=b"probe"):
    """Store key through the router, then ask every node directly: the list of node
    indexes (1-based) that hold it with that value (exactly one when all is well)."""
    c = sb.client()
    try:
        reply = c.request(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
    finally:
        c.close()
    if reply != b"STORED\r\n":
        raise RuntimeError("set %r through the router: %r" % (key, reply))
    holders = []
    for i in range(1, sb.nodes + 1):
        t = sb.node_tcp(i)
        try:
            if t.get(key) == value:
                holders.append(i)
        finally:
            t.close()
    return holders
