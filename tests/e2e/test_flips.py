#!/usr/bin/env python3
"""e2e: membership flips do not resurrect old values (issue 27, Deliver 2), on real memcached.

Four memcached nodes; the router over node1..3 (node4 the spare), warm-up off
([warmup] window_s = 0), one worker. Keys are set through the router (v1).

A. Add then remove. `ringwayctl add node4`; every key that moved to node4 is written through
   the router (v2); `ringwayctl remove node4`: the keys are back at their first owners, which
   held v1. Each read through the router answers v2's successor or a miss, never v1: the
   writes made while node4 owned the keys deleted them at their previous owner (before the
   fix nothing was held with warm-up off, and the first owners served v1).
B. Remove then add back. `ringwayctl remove node3` (still running); its keys are written
   through the router (v3) at their stand-in owners; `ringwayctl add node3` again: every read
   answers v3 or a miss, never the v1/v2 node3 held.
C. Remove node2, five weight changes (more than the four placements held), write node2's
   keys (v4), add node2 back: node2 is flushed before it serves (before the flush on join it
   served v1 for every key it owned again).
D. `add node4 --keep`: node4 is not flushed (it still holds A's v2).
The router's own deletes are counted (moved_deletes: one per write of a moved key, none for
reads); the accounting identity holds.

Environment: RINGWAY, RINGWAY_PLAN, RINGWAYCTL (meson passes them).
"""
import os
import sys

import control_util as cu
import harness as h

EXTRA = """
[warmup]
window_s = 0
"""
KEYS = [b"flip:%d" % i for i in range(400)]


def val(k, gen):
    return gen + b":" + k


def get(c, k):
    r = c.request(b"get %s\r\n" % k)
    if r == b"END\r\n":
        return None
    head, _, rest = r.partition(b"\r\n")
    return rest[:int(head.split()[3])]


def set_all(t, c, keys, gen, what):
    bad = [k for k in keys
           if c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(val(k, gen)), val(k, gen)))
           != b"STORED\r\n"]
    t.eq(bad[:3], [], "%s: %d keys stored through the router" % (what, len(keys)))


def read_check(t, c, keys, latest, old_gens, what):
    got = {k: get(c, k) for k in keys}
    stale = [k for k in keys if got[k] in [val(k, g) for g in old_gens]]
    other = [k for k in keys if got[k] not in (None, val(k, latest))
             and got[k] not in [val(k, g) for g in old_gens]]
    misses = sum(1 for k in keys if got[k] is None)
    h.log("%s: %d reads: %d latest, %d misses, %d older" %
          (what, len(keys), len(keys) - misses - len(stale) - len(other), misses, len(stale)))
    t.eq(stale[:5], [], "%s: no read returns an older value" % what)
    t.eq(other[:5], [], "%s: no read returns another key's value" % what)


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e membership flips (add/remove, remove/add, warm-up off)")
    sb = h.Sandbox("fl", nodes=4)
    ctl = cu.Ctl(sb)
    cu.start(sb, ringway, 3, extra=EXTRA, lcores="0-1")
    t.ok(cu.wait_resolved(sb, 3), "router serves node1..3")
    c = sb.client(timeout=2.0)
    names3 = ["node%d" % i for i in (1, 2, 3)]
    names4 = names3 + ["node4"]
    own3 = h.plan_assign(plan, cu.nodes_file(sb, names3, os.path.join(sb.state, "n3")), "ring",
                         KEYS)
    own4 = h.plan_assign(plan, cu.nodes_file(sb, names4, os.path.join(sb.state, "n4")), "ring",
                         KEYS)
    own12 = h.plan_assign(plan, cu.nodes_file(sb, names3[:2], os.path.join(sb.state, "n2")),
                          "ring", KEYS)
    set_all(t, c, KEYS, b"v1", "start")
    s0 = h.settled_stats(sb)

    # A: add node4, write its keys, remove it.
    moved = [k for k in KEYS if own4[k] != own3[k]]
    t.ok(moved and all(own4[k] == "node4" for k in moved), "A: %d keys move to node4" % len(moved))
    rc, o = ctl.json("add", "node4", "%s:11211" % sb.node_ips[3])
    t.ok(rc == 0, "A: ringwayctl add node4 (%r)" % o)
    t.ok(cu.wait_resolved(sb, 4), "A: router serves node1..4")
    set_all(t, c, moved, b"v2", "A: with node4")
    rc, o = ctl.json("warmup")
    h.log("A: warmup: %r" % o)
    t.ok(rc == 0 and o.get("warmup") == "off" and o.get("held") == "yes",
         "A: warm-up off, the previous placement held for the writes (%r)" % o)
    rc, o = ctl.json("remove", "node4")
    t.ok(rc == 0, "A: ringwayctl remove node4 (%r)" % o)
    read_check(t, c, moved, b"v2", [b"v1"], "A: after add node4 / remove node4")
    d = h.delta(s0, h.settled_stats(sb))
    t.eq(d.get("moved_deletes", 0), len(moved),
         "A: one delete at the previous owner per write of a moved key (%d)"
         % d.get("moved_deletes", 0))

    # B: remove node3 (still running), write its keys elsewhere, add it back.
    gone = [k for k in KEYS if own3[k] == "node3"]
    t.ok(gone and all(own12[k] != "node3" for k in gone), "B: node3 owns %d keys" % len(gone))
    rc, o = ctl.json("remove", "node3")
    t.ok(rc == 0, "B: ringwayctl remove node3 (%r)" % o)
    set_all(t, c, gone, b"v3", "B: without node3")
    rc, o = ctl.json("add", "node3", "%s:11211" % sb.node_ips[2])
    t.ok(rc == 0, "B: ringwayctl add node3 again (%r)" % o)
    t.ok(cu.wait_resolved(sb, 3), "B: router serves node1..3")
    read_check(t, c, gone, b"v3", [b"v1", b"v2"], "B: after remove node3 / add node3")
    held = []
    n3 = sb.node_tcp(3)
    try:
        held = [k for k in gone if n3.get(k) in (val(k, b"v1"), val(k, b"v2"))]
    finally:
        n3.close()
    t.eq(held[:5], [], "B: node3 itself holds none of its keys' values from before")

    # C: remove node2, five key-moving changes (more than the four held placements), write
    # node2's keys, add node2 back: no held placement names node2 any more, so only the
    # flush on join keeps node2 from serving v1 (before it, every key node2 owned again).
    was2 = [k for k in KEYS if own3[k] == "node2"]
    rc, o = ctl.json("remove", "node2")
    t.ok(rc == 0, "C: ringwayctl remove node2 (%r)" % o)
    for w in (2, 3, 4, 5, 6):
        rc, o = ctl.json("weight", "node1", str(w))
        t.ok(rc == 0, "C: weight node1 %d (%r)" % (w, o))
    set_all(t, c, was2, b"v4", "C: without node2, after five changes")
    rc, o = ctl.json("add", "node2", "%s:11211" % sb.node_ips[1])
    t.ok(rc == 0, "C: ringwayctl add node2 again (%r)" % o)
    rc, o = ctl.json("list")
    h.log("C: list: %r" % o)
    read_check(t, c, was2, b"v4", [b"v1", b"v2", b"v3"], "C: node2 added back after five changes")
    n2 = sb.node_tcp(2)
    try:
        kept2 = [k for k in was2 if n2.get(k) is not None and n2.get(k) != val(k, b"v4")]
    finally:
        n2.close()
    t.eq(kept2[:5], [], "C: node2 was flushed when it joined (it holds no older value)")

    # D: `add --keep` serves what the node holds: node4 still has A's v2 of the keys it owned.
    n4 = sb.node_tcp(4)
    try:
        before = [k for k in moved if n4.get(k) == val(k, b"v2")]
        rc, o = ctl.json("add", "node4", "%s:11211" % sb.node_ips[3], "--keep")
        t.ok(rc == 0, "D: ringwayctl add node4 --keep (%r)" % o)
        after = [k for k in moved if n4.get(k) == val(k, b"v2")]
    finally:
        n4.close()
    t.ok(before and after == before,
         "D: --keep: node4 not flushed (%d of %d values kept)" % (len(after), len(before)))
    rc, o = ctl.json("gutter", "add", "g1", "198.18.9.9:11211", "--keep")
    t.ok(rc != 0 and "--keep" in o.get("error", ""), "D: gutter add --keep refused (%r)" % o)

    h.check_identity(t, sb)
    t.ok(sb.router_alive(), "router still running")
    log = sb.stop_router()
    t.ok("identity ok" in log, "exit print: identity ok")
    c.close()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
