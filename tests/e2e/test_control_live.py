#!/usr/bin/env python3
"""e2e: live membership changes on the running router under memcaslap -U load.

The sandbox has 6 memcached nodes; the router starts with node1..4 (node5 and node6 are
spares) and two workers (each with its own replica of the ring; one worker in AF_XDP mode,
RINGWAY_E2E_PORT=af_xdp, where the veth gives one queue).

1. add: 10,000 keys are set through the router and found on the nodes themselves; under
   memcaslap load `ringwayctl plan add node5` gives the exact fraction, `ringwayctl add
   node5` applies it. Then every key is read back through the router (the keys that did not
   move still hit, the moved ones miss), set again and found again on the nodes: the
   fraction that changed owner must match plan's within 1 percentage point, every moved key
   went to node5, and the new placement equals `ringway-plan assign` for the 5 members.
   memcaslap sees no UDP timeout, drop or verify failure.
2. remove node2 under load: its keys move, no other key does; fraction vs plan.
3. 200 add/remove cycles of node6 under load: epoch +400, no crash, no packet dropped by
   the router (identity holds, no drop reason at all), mbufs in use back to the baseline,
   rte_malloc heap use back to the baseline, router RSS not growing.

Environment: RINGWAY, RINGWAY_PLAN, RINGWAYCTL, E2E_CONTROL_KEYS (default 10000),
E2E_CONTROL_CYCLES (default 200).
"""
import os
import random
import sys
import time

import control_util as cu
import harness as h

NKEYS = int(os.environ.get("E2E_CONTROL_KEYS", "10000"))
CYCLES = int(os.environ.get("E2E_CONTROL_CYCLES", "200"))
WORKERS_LCORES = "0@0,1@1,2@1"
MBUF_SLACK = 64


def plan_moved(ctl, t, *args):
    rc, o = ctl.json("plan", *args)
    t.eq(rc, 0, "ringwayctl plan %s exits 0" % " ".join(args))
    return o.get("moved"), o


def settle(sb):
    return h.settled_stats(sb, wait=3.0)


def phase_keys(sb, t, keys, value_of, what):
    failed = cu.set_all(sb, keys, value_of)
    t.eq(failed[:5], [], "%s: every set through the router STORED (%d failed)"
         % (what, len(failed)))
    return cu.single_owner(t, cu.owners(sb, keys, value_of), what)


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e control live")
    sb = h.Sandbox("cl", nodes=6)
    ctl = cu.Ctl(sb)
    rnd = random.Random(5151)
    cu.start(sb, ringway, 4, lcores=WORKERS_LCORES, qpairs=2)
    t.ok(cu.wait_resolved(sb, 4), "router serves node1..4")
    t.eq(ctl.epoch(), 1, "epoch 1 at start")
    keys = [b"cl:%d:%x" % (i, rnd.randrange(1 << 40)) for i in range(NKEYS)]
    results = {}

    # ---- 1. add node5 under load
    def va(k):
        return b"a" + k[-6:]

    def vb(k):
        return b"b" + k[-6:]

    def vc(k):
        return b"c" + k[-6:]

    own0 = phase_keys(sb, t, keys, va, "before add")
    s0 = settle(sb)
    load = cu.Memcaslap(sb, 8)
    time.sleep(2.5)
    planned, _ = plan_moved(ctl, t, "add", "node5", "%s:11211" % sb.node_ips[4])
    rc, o = ctl.json("add", "node5", "%s:11211" % sb.node_ips[4])
    t.ok(rc == 0 and o.get("epoch") == 2, "ringwayctl add node5 under load: OK epoch 2 (%r)" % o)
    st = ctl.stats()
    h.log("add node5: command to every worker on epoch 2: %s us (/ringway/control %r)"
          % (st.get("ctl.change_last_us"), cu.control_tel(sb)))
    t.ok(load.running(), "memcaslap was still running when the add returned")
    cu.check_memcaslap(t, load.result(), "add under load")
    s1 = settle(sb)
    d = h.delta(s0, s1)
    t.eq(h.own_drops(d["drops"]), {}, "add under load: no packet dropped by the router")
    got, bad = cu.get_all(sb, keys)
    own1 = phase_keys(sb, t, keys, vb, "after add")
    moved = [k for k in keys if own0[k] != own1[k]]
    frac = len(moved) / float(len(keys))
    results["add"] = (planned, frac)
    h.log("add node5: plan moved %s, measured %.4f (%d of %d keys)"
          % (planned, frac, len(moved), len(keys)))
    t.ok(planned is not None and abs(frac - planned) <= 0.01,
         "add: measured moved fraction %.4f within 1 point of plan's %s" % (frac, planned))
    t.eq(sorted(set(own1[k] for k in moved)), [5], "add: every moved key went to node5")
    kept = [k for k in keys if own0[k] == own1[k]]
    t.eq(bad[:5], [], "add: every get through the router answered (%d not)" % len(bad))
    t.eq([k for k in kept if got.get(k) != va(k)][:5], [],
         "add: all %d keys that did not move still hit with their value" % len(kept))
    t.eq([k for k in moved if got.get(k) is not None][:5], [],
         "add: the %d moved keys miss at their new owner" % len(moved))
    want = h.plan_assign(plan, cu.nodes_file(sb, ["node1", "node2", "node3", "node4", "node5"],
                                             os.path.join(sb.state, "nodes5")), "ring", keys)
    wrong = [k for k in keys if "node%d" % own1[k] != want.get(k)]
    t.eq(wrong[:5], [], "add: placement equals ringway-plan assign for node1..5 (%d differ)"
         % len(wrong))

    # ---- 2. remove node2 under load
    s1 = settle(sb)
    load = cu.Memcaslap(sb, 8)
    time.sleep(2.5)
    planned, _ = plan_moved(ctl, t, "remove", "node2")
    rc, o = ctl.json("remove", "node2")
    t.ok(rc == 0 and o.get("epoch") == 3, "ringwayctl remove node2 under load: OK epoch 3 (%r)"
         % o)
    t.ok(load.running(), "memcaslap was still running when the remove returned")
    cu.check_memcaslap(t, load.result(), "remove under load")
    s2 = settle(sb)
    t.eq(h.own_drops(h.delta(s1, s2)["drops"]), {}, "remove under load: no packet dropped by the router")
    got, bad = cu.get_all(sb, keys)
    own2 = phase_keys(sb, t, keys, vc, "after remove")
    moved = [k for k in keys if own1[k] != own2[k]]
    on2 = [k for k in keys if own1[k] == 2]
    frac = len(moved) / float(len(keys))
    results["remove"] = (planned, frac)
    h.log("remove node2: plan moved %s, measured %.4f (%d of %d keys; node2 held %d)"
          % (planned, frac, len(moved), len(keys), len(on2)))
    t.eq(sorted(moved), sorted(on2), "remove: exactly node2's keys moved, no other key")
    t.ok(2 not in set(own2.values()), "remove: no key on node2 any more")
    t.ok(planned is not None and abs(frac - planned) <= 0.01,
         "remove: measured moved fraction %.4f within 1 point of plan's %s" % (frac, planned))
    t.eq(bad[:5], [], "remove: every get through the router answered (%d not)" % len(bad))
    t.eq([k for k in keys if own1[k] != 2 and got.get(k) != vb(k)][:5], [],
         "remove: every key not on node2 still hits")
    t.eq([k for k in on2 if got.get(k) is not None][:5], [], "remove: node2's keys miss")

    # ---- 3. add/remove cycles under load
    spare = "%s:11211" % sb.node_ips[5]
    sess = cu.Session(cu.socket_path(sb))
    # One warm-up cycle: node6's neighbour entry and MAC exist from here on.
    sess.cmd("add node6 " + spare)
    sess.cmd("remove node6")
    time.sleep(1.0)
    base_stats = settle(sb)
    base_tel = cu.control_tel(sb)
    base_heap = cu.heap_alloc(sb)
    base_rss = cu.router_rss_kb(sb)
    epoch0 = ctl.epoch()
    h.log("baseline: mbufs in use %s, heap %r, RSS %s kB, epoch %s"
          % (base_tel.get("mbufs_in_use"), base_heap, base_rss, epoch0))
    load = cu.Memcaslap(sb, 16)
    time.sleep(2.0)
    t0 = time.monotonic()
    bad = []
    lat = []
    for i in range(CYCLES):
        for line in ("add node6 " + spare, "remove node6"):
            head, _ = sess.cmd(line)
            if not head.startswith("OK epoch "):
                bad.append((i, line, head))
        if i % 20 == 0:
            lat.append(ctl.stats().get("ctl.change_last_us"))
        time.sleep(0.02)
    took = time.monotonic() - t0
    sess.close()
    h.log("%d add/remove cycles in %.1f s (publish latency samples, us: %r)"
          % (CYCLES, took, lat))
    t.eq(bad[:3], [], "every add/remove of the %d cycles answered OK epoch" % CYCLES)
    t.ok(load.running(), "memcaslap ran through all the cycles")
    cu.check_memcaslap(t, load.result(), "%d cycles under load" % CYCLES)
    t.ok(sb.router_alive(), "router alive after the cycles")
    t.eq(ctl.epoch(), epoch0 + 2 * CYCLES, "epoch moved by exactly %d" % (2 * CYCLES))
    after = settle(sb)
    holds, text = h.identity(after)
    t.ok(holds, "accounting identity after the cycles: " + text)
    t.eq(h.own_drops(h.delta(base_stats, after)["drops"]), {},
         "no packet dropped by the router during the cycles (no drop reason at all)")
    # af_packet copies into mbufs per burst: idle, exactly the baseline. The AF_XDP PMD keeps
    # a fill queue of mbufs whose level moves by up to a batch or two: within MBUF_SLACK.
    slack = MBUF_SLACK if h.PORT == "af_xdp" else 0
    end = time.monotonic() + 5
    while time.monotonic() < end and abs(cu.control_tel(sb).get("mbufs_in_use", 0) -
                                         base_tel.get("mbufs_in_use", 0)) > slack:
        time.sleep(0.2)
    tel = cu.control_tel(sb)
    t.ok(abs(tel.get("mbufs_in_use", -1) - base_tel.get("mbufs_in_use", 0)) <= slack,
         "mbuf pool use back to its baseline (%s, baseline %s, slack %d)"
         % (tel.get("mbufs_in_use"), base_tel.get("mbufs_in_use"), slack))
    heap = cu.heap_alloc(sb)
    t.eq(heap, base_heap, "rte_malloc heap allocation back to its baseline (bytes, count)")
    rss = cu.router_rss_kb(sb)
    h.log("router RSS: %s kB before the cycles, %s kB after" % (base_rss, rss))
    t.ok(rss is not None and base_rss is not None and rss - base_rss < 2048,
         "router RSS did not grow (%s -> %s kB, limit +2 MiB)" % (base_rss, rss))
    t.eq(tel.get("resolve_timeouts"), 0, "no member published with its MAC unknown")
    h.log("publish latency (dp clone + swap + RCU synchronize): last %s us, max %s us"
          % (tel.get("last_publish_us"), tel.get("max_publish_us")))

    log = sb.stop_router()
    t.ok("identity ok" in log, "router exit print: identity ok")
    for k, (p, m) in results.items():
        h.log("moved fraction %s: planned %s, measured %.4f" % (k, p, m))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
