#!/usr/bin/env python3
"""e2e: expiry times the router writes, on real memcached (issue 27, defects 4 and 5).

Four memcached nodes; the router over node1..3 (node4 is the spare to add), [hotkeys] pins
only (threshold 0) over 3 replicas with fill_ttl_s = 3, [warmup] window_s = 60.

A. Hot-key cooling. `hot add K`; a set through the router while K spreads (its copies reach
   the replicas); `hot remove K`; a set late in the cooling (2 s of fill_ttl_s = 3 s: before
   the fix, copied to the replicas with exptime 3, outliving the cooling). Once `ringwayctl
   hotkeys` says nothing cools any more, no replica (TCP, directly) holds K: every copy has
   expired or was deleted. Then a set of v2 through the router, `hot add K` again: 60 gets
   through the router, every one v2 (never a value a replica kept).
B. Warm-up of keys with more than 30 days to live. Through the router: `ms` with T of 29 days,
   exactly 30 days (relative), 30 days + 1 s and 40 days (absolute times, as memcached wants
   them), and an ASCII set with an absolute exptime 40 days ahead. `ringwayctl add node4`; for each key moved there, `mg K v f t` through the
   router (a miss at node4, a hit at the previous owner, its `add` to node4). node4 itself
   (TCP `mg K t v`) then holds every one of them with about the TTL it had (before the fix
   the 30-day+ copies were stored already expired: memcached reads an exptime above
   2,592,000 as a Unix time, and the fill sent the remaining seconds).

Environment: RINGWAY, RINGWAY_PLAN, RINGWAYCTL (meson passes them).
"""
import os
import sys
import time

import control_util as cu
import harness as h

DAY = 86400
EXTRA = """
[hotkeys]
sample_every = 1
interval_ms = 200
threshold_pct = 0
replicas = 3
fill_ttl_s = 3

[warmup]
window_s = 60
ttl_s = 300
"""


def tcp_cmd(sb, i, line):
    """One text command to node i over TCP: its reply lines up to the terminator."""
    c = sb.node_tcp(i)
    try:
        c.sock.sendall(line)
        first = c.line()
        out = [first]
        if first.startswith(b"VA "):
            out.append(c.exact(int(first.split()[1]) + 2)[:-2])
        return out
    finally:
        c.close()


def router_get(c, key):
    r = c.request(b"get %s\r\n" % key)
    if r == b"END\r\n":
        return None
    head, _, rest = r.partition(b"\r\n")
    return rest[:int(head.split()[3])]


def part_cooling(t, sb, ctl):
    key = b"exp:hot"
    c = sb.client(timeout=2.0)
    holders = h.owner_by_router(sb, key, b"v0")
    t.eq(len(holders), 1, "A: %s has one owner (node%s)" % (key.decode(), holders))
    owner = holders[0] if holders else 1
    rc, _ = ctl.json("hot", "add", key.decode())
    t.ok(rc == 0, "A: hot add %s" % key.decode())
    t.eq(c.request(b"set %s 0 0 2\r\nv1\r\n" % key), b"STORED\r\n", "A: set v1 while it spreads")
    rc, _ = ctl.json("hot", "remove", key.decode())
    t.ok(rc == 0, "A: hot remove: it cools")
    time.sleep(2.0)
    rc, o = ctl.json("hotkeys")
    h.log("A: 2 s into the cooling: %r" % o)
    t.eq(c.request(b"set %s 0 0 3\r\nv1b\r\n" % key), b"STORED\r\n", "A: set v1b while it cools")
    end = time.monotonic() + 30
    while time.monotonic() < end:
        rc, o = ctl.json("hotkeys")
        if rc == 0 and o.get("cooling") == 0:
            break
        time.sleep(0.1)
    t.ok(rc == 0 and o.get("cooling") == 0, "A: the key left the hot set (%r)" % o)
    held = {}
    for i in range(1, 4):
        if i != owner:
            c2 = sb.node_tcp(i)
            try:
                held[i] = c2.get(key)
            finally:
                c2.close()
    t.eq(held, {i: None for i in held},
         "A: once it left the set no replica holds a copy of it (%r)" % held)
    t.eq(c.request(b"set %s 0 0 2\r\nv2\r\n" % key), b"STORED\r\n", "A: set v2 after it left")
    rc, _ = ctl.json("hot", "add", key.decode())
    t.ok(rc == 0, "A: hot add again")
    s0 = h.settled_stats(sb)
    got = [router_get(c, key) for _ in range(60)]
    d = h.delta(s0, h.settled_stats(sb))
    t.eq([g for g in got if g != b"v2"], [], "A: hot again: 60 gets, every one v2")
    t.ok(d.get("hot_spread", 0) >= 20, "A: and they spread (%d)" % d.get("hot_spread", 0))
    ctl.json("hot", "remove", key.decode())
    c.close()


def part_warmup(t, sb, ctl, plan_bin):
    now = int(time.time())
    lives = {29 * DAY: b"29d", 30 * DAY: b"30d", 30 * DAY + 1: b"30d1", 40 * DAY: b"40d"}
    names = ["node%d" % i for i in range(1, 5)]
    cands = [b"exp:w:%d" % i for i in range(400)]
    want = h.plan_assign(plan_bin, cu.nodes_file(sb, names, os.path.join(sb.state, "nodes4")),
                         "ring", cands)
    moved = [k for k in cands if want[k] == "node4"]
    t.ok(len(moved) >= len(lives) + 1, "B: %d candidate keys move to node4" % len(moved))
    c = sb.client(timeout=2.0)
    keys = {}
    for (life, tag), k in zip(sorted(lives.items()), moved):
        # A client says more than 30 days as an absolute time (memcached's rule); mg's `t`
        # answers the seconds left all the same.
        exp = life if life <= 30 * DAY else now + life
        r = c.request(b"ms %s 3 T%d\r\n%s\r\n" % (k, exp, tag[:3].ljust(3, b"_")))
        t.eq(r, b"HD\r\n", "B: ms %s T%d (%s) through the router" % (k.decode(), exp, tag.decode()))
        keys[k] = life
    k_abs = moved[len(lives)]
    r = c.request(b"set %s 0 %d 3\r\nabs\r\n" % (k_abs, now + 40 * DAY))
    t.eq(r, b"STORED\r\n", "B: ASCII set with an absolute exptime 40 days ahead")
    rc, o = ctl.json("add", "node4", "%s:11211" % sb.node_ips[3])
    t.ok(rc == 0, "B: ringwayctl add node4 (%r)" % o)
    t.ok(cu.wait_resolved(sb, 4), "B: router serves node1..4")
    rc, o = ctl.json("warmup")
    t.ok(rc == 0 and "open" in str(o), "B: the warm-up window is open (%r)" % o)
    for k, life in keys.items():
        r = c.request(b"mg %s v f t\r\n" % k)
        t.ok(r.startswith(b"VA 3 "), "B: mg %s through the router: the previous owner's hit (%r)"
             % (k.decode(), r))
    t.eq(router_get(c, k_abs), b"abs", "B: get of the absolute-exptime key: its value")
    time.sleep(0.5)  # the fills are noreply: let them land
    for k, life in keys.items():
        r = tcp_cmd(sb, 4, b"mg %s t v\r\n" % k)
        ttl = None
        if r[0].startswith(b"VA "):
            for tok in r[0].split()[2:]:
                if tok.startswith(b"t"):
                    ttl = int(tok[1:])
        h.log("B: node4 %s (T%d): %r" % (k.decode(), life, r))
        t.ok(ttl is not None and life - 120 <= ttl <= life + 1,
             "B: node4 holds %s with about its TTL (%s of %d s)" % (k.decode(), ttl, life))
    r = tcp_cmd(sb, 4, b"mg %s t v\r\n" % k_abs)
    t.ok(r[0].startswith(b"VA "), "B: node4 holds the absolute-exptime key (%r)" % r)
    c.close()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan_bin = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e expiry times (hot-key cooling, warm-up beyond 30 days)")
    sb = h.Sandbox("ex", nodes=4)
    ctl = cu.Ctl(sb)
    cu.start(sb, ringway, 3, extra=EXTRA)
    t.ok(cu.wait_resolved(sb, 3), "router serves node1..3")
    part_cooling(t, sb, ctl)
    part_warmup(t, sb, ctl, plan_bin)
    h.check_identity(t, sb)
    t.ok(sb.router_alive(), "router still running")
    log = sb.stop_router()
    t.ok("identity ok" in log, "exit print: identity ok")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
