#!/usr/bin/env python3
"""Node failure without reshuffling (issue 13), on the wire: 4 memcached nodes, verified gets
through the router from a load thread, then (1) one node frozen (SIGSTOP) for 3 s and let go,
(2) one node killed (SIGKILL) and started again 5 s later, in [failover] mode next, then the
freeze again in mode fast. Measured and asserted per scenario: the time to detect (SIGSTOP or
SIGKILL to `health down` in /ringway/node); requests that failed after detection (0 in next;
in fast, the failed node's keys get SERVER_ERROR at once); keys of the other nodes moved (each
node asked directly over TCP: 0); stale reads after recovery (a key written during the outage
and read after returns the new value or a miss: 0); no epoch change; the accounting identity.
The figures are printed as a table row per scenario (README "When a node fails").

Environment: RINGWAY, RINGWAY_E2E_PORT.
"""

import os
import random
import signal
import subprocess
import sys
import threading
import time

import harness as h

KEYS = 400
REQUEST_MS = 200


def config(sb, mode):
    return sb.config(request_ms=REQUEST_MS, extra=(
        "\n[health]\nfail_down = 3\nwindow_ms = 1000\nprobe_min_ms = 100\n"
        "probe_max_ms = 1000\nprobe_timeout_ms = 200\nup_successes = 2\n"
        "\n[failover]\nmode = %s\nfailover_ttl_s = 60\n" % mode))


def node_pid(sb, i):
    with open(os.path.join(sb.state, "node%d.pid" % i)) as f:
        return int(f.read())


def start_node(sb, i):
    """As scripts/sandbox.sh starts a node (an empty memcached at the same address)."""
    ip = sb.node_ips[i - 1]
    subprocess.run(["ip", "netns", "exec", sb.env["NODE%d_NS" % i], "memcached", "-d", "-U",
                    sb.env["MC_PORT"], "-p", sb.env["MC_PORT"], "-l", ip, "-u", "root", "-t",
                    "1", "-m", "256", "-c", "1024", "-P",
                    os.path.join(sb.state, "node%d.pid" % i)], check=True)
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            c = sb.node_tcp(i)
            c.stats()
            c.close()
            return
        except OSError:
            time.sleep(0.05)


def node_health(sb, i):
    r = sb.telemetry("/ringway/node,node%d" % i)
    body = r.get("/ringway/node", r)
    return body.get("health", "?")


def wait_health(sb, i, pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = node_health(sb, i)
        if pred(st):
            return time.monotonic(), st
        time.sleep(0.01)
    return None, node_health(sb, i)


def holdings(sb, keys):
    """{node: set of keys it holds}, each node asked directly over TCP."""
    out = {}
    for i in range(1, sb.nodes + 1):
        c = sb.node_tcp(i)
        out[i] = {k for k in keys if c.get(k) is not None}
        c.close()
    return out


class Load(threading.Thread):
    """Verified gets of known keys through the router: (time sent, ok, reply) per request."""

    def __init__(self, sb, values):
        super().__init__(daemon=True)
        self.sb, self.values, self.stop = sb, values, threading.Event()
        self.log = []

    def run(self):
        c = self.sb.client(timeout=1.0)
        rnd = random.Random(7)
        keys = sorted(self.values)
        while not self.stop.is_set():
            k = rnd.choice(keys)
            t0 = time.monotonic()
            try:
                r = c.request(b"get %s\r\n" % k)
            except h.Timeout:
                r = None
            v = self.values[k]
            ok = r == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v) or r == b"END\r\n"
            self.log.append((t0, ok, k, r))
            time.sleep(0.002)
        c.close()


def scenario(t, sb, kind, mode, node, owner, values):
    """One failure of @p node; returns the table row."""
    mine = [k for k in values if owner[k] == node]
    others = [k for k in values if owner[k] != node]
    before = {i: ks & {k for k in others if owner[k] == i}
              for i, ks in holdings(sb, others).items()}
    epoch0 = h.flatten_stats(sb.telemetry("/ringway/stats"))["epoch"]
    load = Load(sb, values)
    load.start()
    time.sleep(0.3)
    pid = node_pid(sb, node)
    t0 = time.monotonic()
    if kind == "stop":
        h.freeze(pid)
    else:
        os.kill(pid, signal.SIGKILL)
    t_det, st = wait_health(sb, node, lambda s: s.startswith("down") or
                            s.startswith("probing"), 5.0)
    t.ok(t_det is not None, "%s/%s: node%d detected down (%s)" % (mode, kind, node, st))
    detect_ms = (t_det - t0) * 1000 if t_det else float("nan")
    # Writes during the outage: each of the node's keys gets a new value (next: on its
    # stand-in, expiry capped; fast: refused).
    c = sb.client(timeout=1.0)
    fresh = {}
    for k in mine[:20]:
        v = b"new-" + k
        try:
            r = c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v))
        except h.Timeout:
            r = None
        if r == b"STORED\r\n":
            fresh[k] = v
            values[k] = v  # the load verifies the new value (or a miss) from now on
    if mode == "next":
        t.eq(len(fresh), min(20, len(mine)), "next/%s: writes of node%d's keys stored on "
             "stand-ins" % (kind, node))
    time.sleep(3.0 if kind == "stop" else 5.0)
    if kind == "stop":
        os.kill(pid, signal.SIGCONT)
    else:
        start_node(sb, node)
    t_up, st = wait_health(sb, node, lambda s: s == "up", 10.0)
    t.ok(t_up is not None, "%s/%s: node%d up again (%s)" % (mode, kind, node, st))
    time.sleep(0.3)
    load.stop.set()
    load.join()
    after_det = [e for e in load.log if t_det and e[0] > t_det + 0.001 and
                 (t_up is None or e[0] < t_up)]
    failed = [e for e in after_det if not e[1]]
    errors = [e for e in failed if e[3] is not None and e[3].startswith(b"SERVER_ERROR")]
    if mode == "next":
        t.eq(len(failed), 0, "next/%s: requests failed after detection" % kind)
    else:
        t.eq(len(failed), len(errors), "fast/%s: every failure after detection is an "
             "immediate SERVER_ERROR" % kind)
        t.ok(all(owner[e[2]] == node for e in errors), "fast/%s: errors only for node%d's "
             "keys" % (kind, node))
    stale = 0
    for k, v in fresh.items():
        r = c.request(b"get %s\r\n" % k)
        if r not in (b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v), b"END\r\n"):
            stale += 1
    c.close()
    t.eq(stale, 0, "%s/%s: stale reads after recovery" % (mode, kind))
    after = {i: ks & {k for k in others if owner[k] == i}
             for i, ks in holdings(sb, others).items()}
    moved = sum(len(before[i] ^ after[i]) for i in before)
    t.eq(moved, 0, "%s/%s: keys of the other nodes moved" % (mode, kind))
    epoch1 = h.flatten_stats(sb.telemetry("/ringway/stats"))["epoch"]
    t.eq(epoch1, epoch0, "%s/%s: epoch unchanged" % (mode, kind))
    h.check_identity(t, sb)
    row = (mode, kind, detect_ms, len(after_det), len(failed), len(errors), moved, stale)
    h.log("ROW mode=%s kind=%s detect_ms=%.0f requests_after_detection=%d failed=%d "
          "immediate_errors=%d keys_moved=%d stale_reads=%d" % row)
    return row


def fill(t, sb, tag):
    """KEYS keys (fresh names per run) stored through the router; {key: value}, {key: node}."""
    values, owner = {}, {}
    c = sb.client()
    stored = 0
    for i in range(KEYS):
        k = b"fo:%s:%d" % (tag.encode(), i)
        v = b"v%d" % i
        stored += c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)) == b"STORED\r\n"
        values[k] = v
    c.close()
    t.eq(stored, KEYS, "%s: keys stored through the router" % tag)
    held = holdings(sb, list(values))
    copies = {}
    for i, ks in held.items():
        for k in ks:
            owner[k] = i
            copies[k] = copies.get(k, 0) + 1
    t.eq(sorted(set(copies.values())), [1], "%s: every key on exactly one node" % tag)
    return values, owner


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e failover")
    sb = h.Sandbox("fo")
    rows = []
    for mode in ("next", "fast"):
        sb.start_router(ringway, config(sb, mode))
        t.ok(sb.wait_serving(), "router (%s) serves every node" % mode)
        values, owner = fill(t, sb, mode)
        rows.append(scenario(t, sb, "stop", mode, 2, owner, values))
        if mode == "next":
            rows.append(scenario(t, sb, "kill", mode, 3, owner, values))
        log = sb.router_log()
        t.ok("node node2 suspect -> down" in log and "node node2 probing -> up" in log,
             "%s: node2's state changes logged" % mode)
        sb.stop_router()
    h.log("| failover | failure | detection ms | requests after detection | failed | "
          "immediate errors | keys moved | stale reads |")
    for r in rows:
        h.log("| ringway %s | SIG%s | %.0f | %d | %d | %d | %d | %d |"
              % (r[0], r[1].upper(), r[2], r[3], r[4], r[5], r[6], r[7]))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
