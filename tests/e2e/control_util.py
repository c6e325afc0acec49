"""Shared machinery of the control-plane e2e tests (test_control_*.py): ringwayctl, a raw
control-socket session, a router whose config names only some of the sandbox's nodes (the
rest are spares to `add` live), memcaslap load in the background, and key placement measured
on the memcached nodes themselves.

Binaries from the environment (meson passes them): RINGWAY, RINGWAY_PLAN, RINGWAYCTL.
"""
import json
import os
import re
import socket
import subprocess
import time

import harness as h

MEMCASLAP_CNF = """key
32 64 1
value
100 1000 1
cmd
0 0.1
1 0.9
"""
WINDOW = 32


def ctl_binary():
    return h.binary("RINGWAYCTL", "app/ringwayctl/ringwayctl")


def start(sb, ringway, members, algo="ring", extra="", lcores="0-1", qpairs=1):
    """The router over node1..members of the sandbox (the other nodes are spares); returns the
    config path. Starts from an empty state file unless one is there already."""
    args = [h.SANDBOX, "config", "--prefix", sb.prefix, "--algo", algo, "--members",
            str(members)]
    text = subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout.decode()
    conf = os.path.join(sb.state, "ringway.conf")
    with open(conf, "w") as f:
        f.write(text + extra)
    sb.start_router(ringway, conf, lcores=lcores, qpairs=qpairs)
    return conf


def socket_path(sb):
    return os.path.join(sb.state, "control.sock")


def state_path(sb):
    return os.path.join(sb.state, "state")


class Ctl:
    """ringwayctl against the sandbox router's socket."""

    def __init__(self, sb, binary=None):
        self.bin = binary or ctl_binary()
        self.sock = socket_path(sb)

    def run(self, *args, stdin=None, json_out=False, timeout=60, prefix=()):
        argv = list(prefix) + [self.bin, "--socket", self.sock] + \
            (["--json"] if json_out else []) + list(args)
        r = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    def json(self, *args, stdin=None):
        """(exit status, the last JSON object printed)."""
        rc, out, err = self.run(*args, stdin=stdin, json_out=True)
        objs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return rc, (objs[-1] if objs else {"ok": False, "error": err.strip()})

    def epoch(self):
        rc, o = self.json("epoch")
        return o.get("epoch") if rc == 0 else None

    def stats(self):
        """`stats` as {name: int}."""
        rc, out, _ = self.run("stats")
        d = {}
        for line in out.splitlines():
            p = line.split()
            if len(p) == 2 and re.match(r"^-?\d+$", p[1]):
                d[p[0]] = int(p[1])
        return d


class Session:
    """One raw connection to the control socket: send lines, read replies (framing per the
    docs/control.md: `OK lines N ...` is followed by N body lines)."""

    def __init__(self, path, timeout=10.0):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = b""

    def close(self):
        self.s.close()

    def send(self, data):
        self.s.sendall(data)

    def _line(self):
        while b"\n" not in self.buf:
            d = self.s.recv(1 << 16)
            if not d:
                raise EOFError("server closed the connection")
            self.buf += d
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode(errors="replace")

    def reply(self):
        """(head line, [body lines])."""
        head = self._line()
        m = re.match(r"^OK lines (\d+)", head)
        body = [self._line() for _ in range(int(m.group(1)))] if m else []
        return head, body

    def cmd(self, line):
        self.send(line.encode() + b"\n")
        return self.reply()

    def closed(self, wait=2.0):
        """True when the server closes the connection within `wait` seconds (data before
        the close is returned in self.buf)."""
        self.s.settimeout(wait)
        try:
            while True:
                d = self.s.recv(1 << 16)
                if not d:
                    return True
                self.buf += d
        except socket.timeout:
            return False
        except OSError:
            return True


def wait_resolved(sb, members, timeout=10.0):
    """Until the router knows the MAC of `members` nodes (ARP) and a get round-trips."""
    end = time.monotonic() + timeout
    c = sb.client(timeout=0.3)
    try:
        while time.monotonic() < end:
            try:
                known = h.nodes_mac_known(sb.nodes_view())
            except (OSError, ValueError):
                known = 0
            if known is not None and known >= members:
                try:
                    c.request(b"get warmup\r\n")
                    return True
                except h.Timeout:
                    pass
            time.sleep(0.1)
        return False
    finally:
        c.close()


class Memcaslap:
    """memcaslap -U (ASCII over UDP, 90% gets, 10% sets, full verification) in the background
    from the client namespace; result() waits and parses its summary."""

    def __init__(self, sb, seconds, conc=4, server=None):
        cnf = os.path.join(sb.state, "memcaslap.cnf")
        with open(cnf, "w") as f:
            f.write(MEMCASLAP_CNF)
        self.seconds = seconds
        self.conc = conc
        server = server or "%s:%d" % sb.router
        self.args = ["ip", "netns", "exec", sb.client_ns, "memcaslap", "-s", server, "-U",
                     "-F", cnf, "-t", "%ds" % seconds, "-T", "1", "-c", str(conc), "-v", "1.0",
                     "-w", "4k"]
        h.log("$ " + " ".join(self.args) + " &")
        self.p = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.t0 = time.monotonic()

    def running(self):
        return self.p.poll() is None

    def result(self):
        try:
            out, _ = self.p.communicate(timeout=self.seconds + 90)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, _ = self.p.communicate()
        out = out.decode(errors="replace")
        h.log("\n".join(out.splitlines()[-14:]))
        res = {"rc": self.p.returncode}
        for k in ("cmd_get", "cmd_set", "get_misses", "verify_misses", "verify_failed",
                  "packet_disorder", "packet_drop", "udp_timeout"):
            m = re.search(r"^%s: (\d+)" % k, out, re.M)
            res[k] = int(m.group(1)) if m else None
        m = re.search(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", out)
        res["ops"], res["tps"] = (int(m.group(2)), int(m.group(3))) if m else (None, None)
        return res


def check_memcaslap(t, r, what):
    t.eq(r["rc"], 0, "%s: memcaslap exits 0" % what)
    t.ok(r["ops"] is not None and r["ops"] > 1000, "%s: memcaslap did work (ops %s)"
         % (what, r["ops"]))
    t.eq(r["verify_failed"], 0, "%s: zero verify failures" % what)
    t.eq(r["udp_timeout"], 0, "%s: zero UDP timeouts" % what)
    t.eq(r["packet_drop"], 0, "%s: zero packet drops seen by memcaslap" % what)


def set_all(sb, keys, value_of, sockets=4):
    """Set every key through the router, WINDOW in flight over `sockets` client sockets;
    returns [(key, reply)] of the sets that did not answer STORED (no retry: under test,
    a lost request is a failure)."""
    clients = [sb.client(timeout=2.0) for _ in range(sockets)]
    failed = []
    try:
        for j in range(0, len(keys), WINDOW):
            sent = []
            for n, k in enumerate(keys[j:j + WINDOW]):
                c = clients[n % sockets]
                v = value_of(k)
                sent.append((c, c.send(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)), k))
            for c, rid, k in sent:
                try:
                    r = c.collect(rid)
                except h.Timeout:
                    r = None
                if r != b"STORED\r\n":
                    failed.append((k, r))
        return failed
    finally:
        for c in clients:
            c.close()


def get_all(sb, keys, sockets=4):
    """Get every key through the router: ({key: value or None (miss)}, [keys that timed
    out or got something else than a value or END])."""
    clients = [sb.client(timeout=2.0) for _ in range(sockets)]
    got, bad = {}, []
    try:
        for j in range(0, len(keys), WINDOW):
            sent = []
            for n, k in enumerate(keys[j:j + WINDOW]):
                c = clients[n % sockets]
                sent.append((c, c.send(b"get %s\r\n" % k), k))
            for c, rid, k in sent:
                try:
                    r = c.collect(rid)
                except h.Timeout:
                    bad.append((k, None))
                    continue
                if r == b"END\r\n":
                    got[k] = None
                elif r.startswith(b"VALUE ") and r.endswith(b"\r\nEND\r\n"):
                    got[k] = r.split(b"\r\n", 1)[1].rsplit(b"\r\nEND\r\n", 1)[0]
                else:
                    bad.append((k, r))
        return got, bad
    finally:
        for c in clients:
            c.close()


def owners(sb, keys, value_of):
    """{key: [node indexes holding it with value_of(key)]}: each node asked directly (TCP
    multi-gets at its own address), never through the router."""
    out = {k: [] for k in keys}
    for i in range(1, sb.nodes + 1):
        t = sb.node_tcp(i)
        try:
            for j in range(0, len(keys), 100):
                for k, v in t.get_many(keys[j:j + 100]).items():
                    if v == value_of(k):
                        out[k].append(i)
        finally:
            t.close()
    return out


def single_owner(t, own, what):
    """{key: node index} when every key is on exactly one node."""
    multi = [(k, v) for k, v in own.items() if len(v) != 1]
    t.eq(multi[:5], [], "%s: every key on exactly one node (%d not)" % (what, len(multi)))
    return {k: (v[0] if v else None) for k, v in own.items()}


def nodes_file(sb, names, path):
    """A `name address:port weight` file (ringway-plan's format) for sandbox nodes `names`."""
    with open(path, "w") as f:
        for n in names:
            i = int(n[4:])
            f.write("%s %s:%s 1\n" % (n, sb.node_ips[i - 1], sb.env["MC_PORT"]))
    return path


def router_rss_kb(sb):
    with open(os.path.join(sb.state, "router.pid")) as f:
        pid = int(f.read())
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def control_tel(sb):
    return sb.telemetry("/ringway/control").get("/ringway/control", {})


def heap_alloc(sb):
    """Bytes allocated from DPDK heap 0 (rte_malloc), from /eal/heap_info,0."""
    r = sb.telemetry("/eal/heap_info,0").get("/eal/heap_info", {})
    return r.get("Alloc_size"), r.get("Alloc_count")
