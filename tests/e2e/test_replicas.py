#!/usr/bin/env python3
"""Replicated pools through a node failure (issue 31 item 2), on the wire: 4 memcached nodes,
[failover] next, once with replicas = 1 and once with replicas = 2. Per run: a preloaded key
set, a read-heavy load (90% gets, 10% sets, one client, sequential: counted, not timed), node2
frozen with SIGSTOP until the router has it down, the same number of requests during the
outage, SIGCONT, and the same again after its return. Measured and printed: the hit ratio of
the gets before and during the outage (R = 2: within 0.5 points; R = 1 loses about the node's
share), the write cost (node-side `cmd_set` from memcached's stats per client set), and stale
reads (every value carries a version; a get must return the last acknowledged version of its
key or a newer one, or a miss: 0 in every phase, across the failure and the return).

Environment: RINGWAY, RINGWAY_E2E_PORT.
"""

import os
import random
import signal
import sys
import time

import harness as h

KEYS = 600
OPS = 1500  # requests per phase
FROZEN = 2


def config(sb, replicas):
    text = open(sb.config(request_ms=200)).read()
    text = text.replace("[placement]\n", "[placement]\nreplicas = %d\n" % replicas, 1)
    text += ("\n[health]\nfail_down = 3\nwindow_ms = 1000\nprobe_min_ms = 100\n"
             "probe_max_ms = 1000\nprobe_timeout_ms = 200\nup_successes = 2\n"
             "\n[failover]\nmode = next\nfailover_ttl_s = 60\n")
    path = os.path.join(sb.state, "ringway.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


def node_pid(sb, i):
    with open(os.path.join(sb.state, "node%d.pid" % i)) as f:
        return int(f.read())


def node_health(sb, i):
    r = sb.telemetry("/ringway/node,node%d" % i)
    return r.get("/ringway/node", r).get("health", "?")


def wait_health(sb, i, pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred(node_health(sb, i)):
            return True
        time.sleep(0.02)
    return False


def node_sets(sb, nodes):
    total = 0
    for i in nodes:
        c = sb.node_tcp(i)
        total += int(c.stats()["cmd_set"])
        c.close()
    return total


class Run:
    """One client's requests and what they saw: acked[k] is the last version acknowledged."""

    def __init__(self, sb, prefix):
        self.c = sb.client(timeout=0.5)
        self.keys = [b"%s-%d" % (prefix, i) for i in range(KEYS)]
        self.acked = {}
        self.version = 0
        self.rnd = random.Random(31)

    def set(self, k):
        self.version += 1
        v = b"v%d" % self.version
        try:
            r = self.c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v))
        except h.Timeout:
            r = None
        if r == b"STORED\r\n":
            self.acked[k] = self.version
            return True
        return False

    def phase(self, n):
        """n requests; (gets, hits, stale, errors, sets stored)."""
        gets = hits = stale = errors = stored = 0
        for _ in range(n):
            k = self.rnd.choice(self.keys)
            if self.rnd.random() < 0.1:
                stored += self.set(k)
                continue
            gets += 1
            want = self.acked.get(k, 0)
            try:
                r = self.c.request(b"get %s\r\n" % k)
            except h.Timeout:
                errors += 1
                continue
            if r == b"END\r\n":
                continue
            parts = r.split(b"\r\n")
            if not r.startswith(b"VALUE ") or len(parts) < 2 or not parts[1].startswith(b"v"):
                errors += 1
                continue
            hits += 1
            if int(parts[1][1:]) < want:
                stale += 1
        return gets, hits, stale, errors, stored


def until_down(sb, run, timeout=20.0):
    """Gets until the router has the frozen node down: its requests time out and count
    against it (passive detection). Not counted in any phase."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if node_health(sb, FROZEN).startswith("down"):
            return True
        try:
            run.c.request(b"get %s\r\n" % run.rnd.choice(run.keys), timeout=0.05)
        except h.Timeout:
            pass
    return False


def one(t, sb, ringway, replicas):
    sb.start_router(ringway, config(sb, replicas))
    t.ok(sb.wait_serving(), "R=%d: router serves every node" % replicas)
    run = Run(sb, b"r%d" % replicas)
    sets0 = node_sets(sb, range(1, sb.nodes + 1))
    stored = sum(any(run.set(k) for _ in range(3)) for k in run.keys)
    cost = (node_sets(sb, range(1, sb.nodes + 1)) - sets0) / max(stored, 1)
    t.eq(stored, KEYS, "R=%d: preload stored" % replicas)
    before = run.phase(OPS)
    pid = node_pid(sb, FROZEN)
    h.freeze(pid)
    try:
        t.ok(until_down(sb, run), "R=%d: node%d marked down" % (replicas, FROZEN))
        during = run.phase(OPS)
    finally:
        os.kill(pid, signal.SIGCONT)
    t.ok(wait_health(sb, FROZEN, lambda s: s == "up", 15.0),
         "R=%d: node%d up again" % (replicas, FROZEN))
    after = run.phase(OPS)
    st = sb.stats()
    h.check_identity(t, sb)
    sb.stop_router()
    ratio = [100.0 * p[1] / max(p[0], 1) for p in (before, during, after)]
    stale = before[2] + during[2] + after[2]
    h.log("ROW replicas=%d hit_before=%.2f hit_during=%.2f hit_after=%.2f write_cost=%.2f "
          "stale=%d errors=%d/%d/%d repl_copies=%d repl_failover=%d repl_missed=%d "
          "failover_unknown=%d" % (replicas, ratio[0], ratio[1], ratio[2], cost, stale,
                                   before[3], during[3], after[3], st.get("repl_copies", 0),
                                   st.get("repl_failover", 0), st.get("repl_missed", 0),
                                   st.get("failover_unknown", 0)))
    t.eq(stale, 0, "R=%d: stale reads across the failure and the return" % replicas)
    t.eq(during[3], 0, "R=%d: errors or timeouts during the outage" % replicas)
    return ratio, cost


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e replicas")
    sb = h.Sandbox("repl", nodes=4)
    try:
        r1, c1 = one(t, sb, ringway, 1)
        r2, c2 = one(t, sb, ringway, 2)
    finally:
        sb.down()
    h.log("| replicas | hit ratio before % | during the outage % | after the return % | "
          "node sets per client set |")
    for r, (ratio, cost) in ((1, (r1, c1)), (2, (r2, c2))):
        h.log("| %d | %.2f | %.2f | %.2f | %.2f |" % (r, ratio[0], ratio[1], ratio[2], cost))
    t.ok(abs(r2[0] - r2[1]) <= 0.5, "R=2: hit ratio during the outage within 0.5 points of "
         "before (%.2f -> %.2f)" % (r2[0], r2[1]))
    t.ok(r1[0] - r1[1] >= 10, "R=1: the outage costs hits (%.2f -> %.2f)" % (r1[0], r1[1]))
    t.ok(abs(c1 - 1.0) < 0.05 and abs(c2 - 2.0) < 0.05,
         "write cost: %.2f and %.2f node sets per client set" % (c1, c2))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
