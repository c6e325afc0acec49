#!/usr/bin/env python3
"""e2e: Debian's Prometheus scrapes the router's /metrics, and what it stores agrees with the
router's own counters and latency quantiles.

The router runs with `[metrics] listen = 127.0.0.1:9150` in its namespace; a prometheus
server (started here, in the same namespace, scraping 127.0.0.1:9150 every second; its data
in a temporary directory) runs while a client sends gets and sets through the router. Once
the traffic has stopped and Prometheus has scraped after that, its HTTP API
(/api/v1/query) must give: ringway_forwarded_total and ringway_returned_total equal to the
router's /ringway/stats; the per-node forwarded sum equal to the total; the round-trip
histogram's _count equal to the replies the router measured (/ringway/nodes rtt_replies)
and ringway_router_seconds_count equal to forwarded + returned; histogram_quantile() of the
round trips (p50, p99) within the exported bucket's width of the router's own quantiles
(/ringway/stats rtt_p50_ns, rtt_p99_ns: the exposition has 4 buckets per octave, so the
two agree within 25 %). The scraped text itself must pass `promtool check metrics`.
/metrics cannot be starved (issue 28 item 5): with 64 idle connections and 64 that send a
request one byte every 0.3 s open, five scrapes each answer within 1 s (before: 16 idle
connections stalled every scrape for 10 s), Prometheus's own scrapes stay up, and the idle
ones are closed by the router after its 5 s timeout. Every
process started here is stopped by its PID; the temporary directory is removed.

Environment: RINGWAY; prometheus and promtool from Debian (scripts/setup-deps.sh).
"""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import harness as h
from nsutil import socket_in

METRICS_PORT = 9150
PROM_PORT = 9090
GETS = 400


def http_get(ns, port, path, timeout=5.0):
    """(status, body) of GET http://127.0.0.1:port/path from inside namespace ns."""
    s = socket_in(ns, socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" % path.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def query(ns, expr):
    """The value of PromQL `expr` at now (a single-sample vector), or None."""
    st, body = http_get(ns, PROM_PORT, "/api/v1/query?query=" + urllib.parse.quote(expr))
    r = json.loads(body)
    if st != 200 or r.get("status") != "success" or not r["data"]["result"]:
        return None
    return float(r["data"]["result"][0]["value"][1])


class Prometheus:
    def __init__(self, ns):
        self.dir = tempfile.mkdtemp(prefix="ringway-prom-")
        self.proc = None
        atexit.register(self.stop)
        conf = os.path.join(self.dir, "prometheus.yml")
        with open(conf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: ringway\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % METRICS_PORT)
        self.log = open(os.path.join(self.dir, "prometheus.log"), "w")
        # ip netns exec execs prometheus: the PID is prometheus's own.
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, "prometheus", "--config.file", conf,
             "--storage.tsdb.path", os.path.join(self.dir, "data"),
             "--web.listen-address", "127.0.0.1:%d" % PROM_PORT],
            stdout=self.log, stderr=subprocess.STDOUT)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.log:
            self.log.close()
            self.log = None
        if self.dir and os.path.isdir(self.dir):
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def wait_for(what, fn, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = fn()
            if v:
                return v
        except (OSError, ValueError, KeyError, IndexError):
            pass
        time.sleep(0.5)
    h.log("timed out waiting for %s" % what)
    return None


def close(a, b, rel):
    return a is not None and b is not None and abs(a - b) <= rel * max(a, b)


def starve(ns, idle, slow, t):
    """Open idle and slowly-sending connections to /metrics, time scrapes while they are open.
    Returns the sockets' fate after the idle timeout: (idle closed by the router, slow open)."""
    socks_idle, socks_slow = [], []
    for _ in range(idle):
        s = socket_in(ns, socket.AF_INET, socket.SOCK_STREAM)
        s.connect(("127.0.0.1", METRICS_PORT))
        socks_idle.append(s)
    req = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    for _ in range(slow):
        s = socket_in(ns, socket.AF_INET, socket.SOCK_STREAM)
        s.connect(("127.0.0.1", METRICS_PORT))
        s.sendall(req[:10])
        socks_slow.append(s)
    stop = [False]

    def trickle():
        i = 10
        while not stop[0] and i < len(req):
            for s in socks_slow:
                try:
                    s.sendall(req[i:i + 1])
                except OSError:
                    pass
            i += 1
            time.sleep(0.3)

    import threading
    th = threading.Thread(target=trickle, daemon=True)
    th.start()
    time.sleep(0.5)
    worst = 0.0
    for _ in range(5):
        t0 = time.monotonic()
        try:
            st, body = http_get(ns, METRICS_PORT, "/metrics", timeout=3.0)
        except OSError:
            st, body = 0, b""
        took = time.monotonic() - t0
        worst = max(worst, took)
        t.ok(st == 200 and b"ringway_forwarded_total" in body and took < 1.0,
             "with %d idle and %d slow connections open a scrape answers in %.3f s (< 1 s)"
             % (idle, slow, took))
        time.sleep(0.2)
    h.log("/metrics under %d idle + %d slow connections: worst scrape %.3f s"
          % (idle, slow, worst))
    time.sleep(6.0)  # past the router's 5 s idle timeout
    closed = 0
    for s in socks_idle:
        s.settimeout(0.5)
        try:
            closed += s.recv(1) == b""
        except ConnectionResetError:
            closed += 1
        except OSError:
            pass
    stop[0] = True
    th.join()
    alive = 0
    for s in socks_slow:
        try:
            s.sendall(b"b")
            alive += 1
        except OSError:
            pass
    for s in socks_idle + socks_slow:
        s.close()
    return closed, alive


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e prometheus")
    for tool in ("prometheus", "promtool"):
        if shutil.which(tool) is None:
            t.ok(False, "%s installed (scripts/setup-deps.sh installs Debian's prometheus)"
                 % tool)
            return t.finish()
    sb = h.Sandbox("pm")
    ns = sb.env["NS_ROUTER"]
    conf = sb.config(extra="\n[metrics]\nlisten = 127.0.0.1:%d\n" % METRICS_PORT)
    sb.start_router(ringway, conf)
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    t.ok("metrics at http://127.0.0.1:%d/metrics" % METRICS_PORT in sb.router_log(),
         "router says where its metrics are")
    st, _ = http_get(ns, METRICS_PORT, "/nothing")
    t.eq(st, 404, "only /metrics is served")

    prom = Prometheus(ns)
    up = wait_for("prometheus to scrape the router",
                  lambda: query(ns, 'up{job="ringway"}') == 1.0, 60)
    t.ok(up, "prometheus runs and its scrape of the router is up")

    c = sb.client()
    answered = 0
    for i in range(GETS):
        key = b"prom:%d" % i
        if i % 4 == 0:
            answered += c.request(b"set %s 0 0 3\r\nabc\r\n" % key) == b"STORED\r\n"
        else:
            answered += c.request(b"get %s\r\n" % key).endswith(b"END\r\n")
    c.close()
    t.eq(answered, GETS, "every request answered through the router")
    stats = h.settled_stats(sb)
    nodes = h.nodes_list(sb.nodes_view())
    raw = sb.telemetry("/ringway/stats")
    own = raw.get("/ringway/stats", raw)
    settled = time.time()

    # Prometheus's latest sample must come from a scrape after the traffic stopped.
    fresh = wait_for("a scrape after the traffic", lambda: (query(
        ns, 'timestamp(ringway_forwarded_total)') or 0) > settled + 1.0, 30)
    t.ok(fresh, "prometheus scraped after the traffic stopped")
    fwd = query(ns, "ringway_forwarded_total")
    ret = query(ns, "ringway_returned_total")
    h.log("router: forwarded %d returned %d; prometheus: forwarded %s returned %s"
          % (stats["forwarded"], stats["returned"], fwd, ret))
    t.eq(fwd, float(stats["forwarded"]), "prometheus ringway_forwarded_total = the router's")
    t.eq(ret, float(stats["returned"]), "prometheus ringway_returned_total = the router's")
    t.ok(stats["forwarded"] >= GETS, "the traffic went through the router")
    t.eq(query(ns, "sum(ringway_node_forwarded_total)"), float(stats["forwarded"]),
         "per-node forwarded counters add up to the total")
    t.eq(query(ns, 'sum(ringway_drops_total{reason="bad_port"})'),
         float(stats["drops"].get("bad_port", 0)), "drop reasons are a label")
    replies = sum(n.get("rtt_replies", 0) for n in nodes)
    t.eq(query(ns, "sum(ringway_node_rtt_seconds_count)"), float(replies),
         "round-trip histogram count = replies the router measured (%d)" % replies)
    t.eq(query(ns, "ringway_router_seconds_count"),
         float(stats["forwarded"] + stats["returned"]),
         "router-time histogram count = forwarded + returned")
    for q, key in ((0.5, "rtt_p50_ns"), (0.99, "rtt_p99_ns")):
        pq = query(ns, "histogram_quantile(%g, sum by (le) (ringway_node_rtt_seconds_bucket))"
                   % q)
        mine = own.get(key, 0) / 1e9
        h.log("round trip p%g: prometheus %s s, router %.9f s" % (q * 100, pq, mine))
        t.ok(close(pq, mine, 0.25),
             "histogram_quantile(%g) of the round trips (%s s) within 25 %% of the "
             "router's %s (%.6f s)" % (q, pq, key, mine))

    st, text = http_get(ns, METRICS_PORT, "/metrics")
    t.eq(st, 200, "GET /metrics answers 200")
    shown = (b"ringway_forwarded_total ", b"ringway_drops_total{reason=\"client_denied\"}",
             b"ringway_node_slow{", b"ringway_router_seconds_count")
    for line in text.splitlines():
        if line.startswith(shown) or (b"rtt_seconds" in line and b"node=\"node1\"" in line
                                      and (b"_count" in line or b"le=\"3.2768e-05\"" in line)):
            h.log("metrics: " + line.decode())
    r = subprocess.run(["promtool", "check", "metrics"], input=text,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    t.ok(r.returncode == 0, "promtool check metrics accepts the exposition (%s)"
         % r.stdout.decode(errors="replace").strip()[:200])
    # the fleet's part: a router that cannot apply a fleet revision says so in /metrics
    import control_util as cu
    sess = cu.Session(cu.socket_path(sb))
    try:
        t.ok(b"\nringway_fleet_managed 0\n" in text and
             b"\nringway_fleet_refused_revision 0\n" in text,
             "/metrics: ringway_fleet_managed 0, ringway_fleet_refused_revision 0")
        head, _ = sess.cmd("fleet refused 41")
        t.ok(head.endswith(" refused 41"), "the agent's word `fleet refused 41`: %s" % head)
        found = wait_for("the refusal in /metrics", lambda: b"\nringway_fleet_refused_"
                         b"revision 41\n" in http_get(ns, METRICS_PORT, "/metrics")[1], 5)
        t.ok(found, "/metrics: ringway_fleet_refused_revision 41")
        sess.cmd("fleet local")
    finally:
        sess.close()
    closed, alive = starve(ns, 64, 64, t)
    t.eq(closed, 64, "the 64 idle connections were closed by the router after its timeout")
    h.log("slow connections still open after 6 s of trickling: %d of 64" % alive)
    t.ok(query(ns, 'up{job="ringway"}') == 1.0, "prometheus's own scrape stayed up")
    h.check_identity(t, sb)
    prom.stop()
    sb.stop_router()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
