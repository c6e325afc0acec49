#!/usr/bin/env python3
"""Operations at 10, 100 and 1,000 nodes (issue 28 item 4): time and bytes of `ringwayctl
list`, `list --json`, `top -b`, /metrics, the telemetry listing /ringway/nodes (every page),
`add`, `remove`, `replace`, and a fleet change (etcd commit -> the router on the new epoch,
through ringway-sync; skipped without etcd). A benchmark: it writes JSON, never fails on time.

The router is the real ringway on a net_ring port (no packets, no real nodes: the members
need not answer for listing and metrics; their addresses are 198.18.1.1 onwards in
198.18.0.0/15, each with a static MAC so nothing is resolved), one worker, idle = backoff,
--no-huge, its own --file-prefix; its runtime folder is removed.

--check: only at the largest size, every node must appear in each listing (list, list
--json, top -b, /metrics, /ringway/nodes paged); exit 1 naming what is missing. That is the
test `scale_listing` runs.

/metrics also reports thread_cpu_s: the metrics thread's CPU per scrape (user + system, 10 ms
ticks, averaged over the repeats), what the router spends whatever the machine's load;
--save-metrics FILE keeps the last scrape at each size N as FILE.N (to diff two builds).

Usage: scale.py --build DIR [--out FILE.json] [--sizes 10,100,1000] [--repeat N] [--check]
                [--save-metrics FILE]
"""
import argparse
import base64
import ipaddress
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROUTER_IP = "198.18.0.1"
NODE_MAC = "02:00:c6:12:01:01"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def node_addr(i):
    return str(ipaddress.IPv4Address(int(ipaddress.IPv4Address("198.18.1.1")) + i))


def write_config(path, tmp, n, metrics_port):
    lines = ["[router]", "port = 0", "address = %s" % ROUTER_IP, "mac = 02:00:c6:12:00:01",
             "listen_ports = 11211", "allowed_clients = 198.18.0.0/24", "idle = backoff",
             "[placement]", "algorithm = ring", "vnodes = 160",
             "[tables]", "neighbours = %d" % max(1024, 2 * n + 16),
             "[control]", "socket = %s/ctl.sock" % tmp, "state_file = %s/state" % tmp,
             "[metrics]", "listen = 127.0.0.1:%d" % metrics_port,
             "[log]", "level = notice"]
    for i in range(n):
        lines += ["[node n%d]" % i, "address = %s:11211" % node_addr(i), "mac = %s" % NODE_MAC]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Router:
    def __init__(self, build, tmp, n, tag):
        self.prefix = "rwscale%d%s" % (os.getpid() % 100000, tag)
        self.tmp = tmp
        self.metrics_port = free_port()
        conf = os.path.join(tmp, "ringway.conf")
        write_config(conf, tmp, n, self.metrics_port)
        self.cmd = [os.path.join(build, "app/ringway/ringway"), "-l", "0,1", "--no-pci",
                    "--no-huge", "-m", "512", "--file-prefix", self.prefix,
                    "--vdev", "net_ring0", "--log-level", "lib.*:error",
                    "--", "--config", conf]
        self.log = open(os.path.join(tmp, "ringway.log"), "a+")
        self.p = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        self.sock = os.path.join(tmp, "ctl.sock")
        self.tel = "/var/run/dpdk/%s/dpdk_telemetry.v2" % self.prefix
        end = time.time() + 60
        while time.time() < end:
            self.log.flush()
            with open(self.log.name) as f:
                if "serving on port" in f.read():
                    return
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("ringway did not start: %s" % open(self.log.name).read()[-2000:])

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        shutil.rmtree("/var/run/dpdk/%s" % self.prefix, ignore_errors=True)


def telemetry(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    try:
        s.recv(1 << 16)  # greeting
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20))
    finally:
        s.close()


def nodes_paged(path):
    """Every node of /ringway/nodes, page by page: ({index: fields}, pages, bytes)."""
    nodes, frm, pages, size = {}, 0, 0, 0
    while True:
        reply = telemetry(path, "/ringway/nodes,%d" % frm)
        body = reply["/ringway/nodes"]
        size += len(json.dumps(reply))
        pages += 1
        for k, v in body.items():
            if k.startswith("node") and "_" in k:
                idx, _, field = k[4:].partition("_")
                if idx.isdigit():
                    nodes.setdefault(int(idx), {})[field] = v
        if body["next"] >= body["nodes"] or body["next"] <= frm:
            return nodes, pages, size, body["nodes"]
        frm = body["next"]


def timed(fn, repeat):
    """(median seconds, bytes of the last result, last result) of fn() over repeat runs."""
    times, out = [], b""
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(out), out


def ctl(build, sock, *args, stdin=None):
    r = subprocess.run([os.path.join(build, "app/ringwayctl/ringwayctl"), "--socket", sock] +
                       list(args), input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("ringwayctl %s: %s" % (" ".join(args), r.stderr.decode()))
    return r.stdout


def http_metrics(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read()


def thread_cpu_s(pid, prefix="MHD"):
    """CPU seconds (user + system) of the process's threads whose name starts with prefix:
    the /metrics thread is libmicrohttpd's, which builds the exposition. Scheduling on a busy
    machine stretches a scrape's wall time, not this."""
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        if name.startswith(prefix):
            fields = st[st.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return total / tick


def b64(s):
    return base64.b64encode(s.encode()).decode()


class Etcd:
    def __init__(self, tmp):
        self.url = "http://127.0.0.1:%d" % free_port()
        peer = "http://127.0.0.1:%d" % free_port()
        self.p = subprocess.Popen(
            ["etcd", "--name", "s", "--data-dir", os.path.join(tmp, "etcd"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", "s=" + peer], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        end = time.time() + 30
        while time.time() < end:
            try:
                req = urllib.request.Request(self.url + "/v3/kv/range",
                                             data=json.dumps({"key": b64("/x")}).encode())
                urllib.request.urlopen(req, timeout=2).read()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("etcd did not start")

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def fleet_change(build, tmp, router, n, repeat):
    """Median time from `ringwayctl --etcd weight` returning to the router on its revision."""
    if shutil.which("etcd") is None:
        return {"skipped": "etcd not installed"}
    etcd = Etcd(os.path.join(tmp, "e"))
    ctlbin = os.path.join(build, "app/ringwayctl/ringwayctl")
    fleet = [ctlbin, "--etcd", etcd.url, "--cluster", "scale"]
    agent = None
    try:
        subprocess.run(fleet + ["init", "--router", router.sock], check=True,
                       stdout=subprocess.DEVNULL)
        agent = subprocess.Popen([os.path.join(build, "app/ringway-sync/ringway-sync"),
                                  "--etcd", etcd.url, "--cluster", "scale", "--name", "r",
                                  "--socket", router.sock], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        times, commit = [], []
        for k in range(repeat + 1):
            t0 = time.perf_counter()
            out = subprocess.run(fleet + ["weight", "n0", str(2 + k % 2)], check=True,
                                 stdout=subprocess.PIPE).stdout.decode()
            t1 = time.perf_counter()
            rev = int(out.split()[2])
            end = time.time() + 60
            while time.time() < end:
                head = ctl(build, router.sock, "epoch").decode().split()
                if int(head[head.index("epoch") + 1]) == rev:
                    break
                time.sleep(0.005)
            if k > 0:  # the first also waits for the agent to start
                times.append(time.perf_counter() - t0)
                commit.append(t1 - t0)
        return {"commit_to_router_s": statistics.median(times),
                "commit_s": statistics.median(commit), "nodes": n}
    finally:
        if agent is not None:
            agent.send_signal(signal.SIGTERM)
            agent.wait(5)
        etcd.stop()


def measure(build, n, repeat, check, tag, save_metrics=None):
    tmp = tempfile.mkdtemp(prefix="ringway-scale-")
    router = None
    res, missing = {"nodes": n}, []
    names = {"n%d" % i for i in range(n)}
    try:
        router = Router(build, tmp, n, tag)
        sock = router.sock
        for key, args in (("list", ["list"]), ("list_json", ["--json", "list"]),
                          ("top_b", ["top", "-b", "-n", "1"])):
            s, size, out = timed(lambda: ctl(build, sock, *args), repeat)
            res[key] = {"s": s, "bytes": size}
            text = out.decode()
            if key == "list_json":
                seen = {r.get("name") for r in json.loads(text).get("items", [])}
            else:
                seen = {w for w in text.split() if w in names}
            if check and names - seen:
                missing.append("%s: %d of %d nodes missing (e.g. %s)" % (
                    key, len(names - seen), n, sorted(names - seen)[:3]))
        cpu0 = thread_cpu_s(router.p.pid)
        s, size, out = timed(lambda: http_metrics(router.metrics_port), repeat)
        res["metrics"] = {"s": s, "bytes": size,
                          "thread_cpu_s": (thread_cpu_s(router.p.pid) - cpu0) / repeat}
        if save_metrics:
            with open("%s.%d" % (save_metrics, n), "wb") as f:
                f.write(out)
        seen = {ln.split(b'node="')[1].split(b'"')[0].decode()
                for ln in out.splitlines() if ln.startswith(b"ringway_node_forwarded_total{")}
        if check and names - seen:
            missing.append("/metrics: %d of %d nodes missing" % (len(names - seen), n))
        t0 = time.perf_counter()
        nodes, pages, size, total = nodes_paged(router.tel)
        res["telemetry_nodes"] = {"s": time.perf_counter() - t0, "bytes": size,
                                  "pages": pages}
        seen = {v.get("name") for v in nodes.values()}
        if check and (names - seen or total != n):
            missing.append("/ringway/nodes: %d of %d nodes missing over %d pages" % (
                len(names - seen), n, pages))
        first = telemetry(router.tel, "/ringway/nodes")["/ringway/nodes"]
        res["telemetry_nodes"]["first_page_nodes"] = first["next"] - first["first"]
        # changes: each timed once per repeat, undone between
        add_t, rem_t, rep_t = [], [], []
        for k in range(repeat):
            t0 = time.perf_counter()
            ctl(build, sock, "add", "extra", "%s:11211" % node_addr(n + 1), "mac", NODE_MAC)
            add_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ctl(build, sock, "remove", "extra")
            rem_t.append(time.perf_counter() - t0)
            block = "".join("n%d %s:11211 weight %d mac %s\n" % (
                i, node_addr(i), 1 + (k + i) % 2, NODE_MAC) for i in range(n))
            t0 = time.perf_counter()
            ctl(build, sock, "replace", stdin=(block + "end\n").encode())
            rep_t.append(time.perf_counter() - t0)
        res["add"] = {"s": statistics.median(add_t)}
        res["remove"] = {"s": statistics.median(rem_t)}
        res["replace"] = {"s": statistics.median(rep_t), "bytes": len(block) + 4}
        if not check:
            res["fleet_change"] = fleet_change(build, tmp, router, n, repeat)
    finally:
        if router is not None:
            router.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return res, missing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--out")
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--save-metrics", metavar="FILE",
                    help="write the last /metrics scrape at N nodes to FILE.N")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    if a.check:
        sizes = sizes[-1:]
    doc = {"what": "operations at N nodes (median of %d runs)" % a.repeat,
           "loadavg_start": os.getloadavg()[0], "sizes": []}
    failed = []
    for k, n in enumerate(sizes):
        res, missing = measure(a.build, n, a.repeat, a.check, "s%d" % k, a.save_metrics)
        doc["sizes"].append(res)
        failed += ["%d nodes: %s" % (n, m) for m in missing]
        print(json.dumps(res), flush=True)
    doc["loadavg_end"] = os.getloadavg()[0]
    if a.out:
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
    for f in failed:
        print("FAIL %s" % f)
    if a.check:
        print("%s: every one of %d nodes in list, list --json, top -b, /metrics and "
              "/ringway/nodes (paged)" % ("FAIL" if failed else "OK", sizes[-1]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
