#!/usr/bin/env python3
"""e2e: hot keys found by the router and their reads spread over replicas, consistently.

Four memcached nodes, the router with [hotkeys] detection on every request, a 200 ms view and
spreading at 5 % of a node's rate over 3 replicas. Through the router:
  - a skewed load (one key in 70 % of the gets, 300 cold keys): `ringwayctl hotkeys` names
    the hot key first with its owner (the planner's) and `spread hot`; its gets reach each of
    its 3 replicas (each node's own `stats`: get hits on the replicas), every get returns the
    stored value (hits stay hits), the router's fills and the absorbed misses are counted;
  - consistency: rounds of a set (new value) then gets from another client socket right
    after the STORED: each returns that value or a miss, never an older one; a delete then a
    get: a miss; a set after it: the new value;
  - `ringwayctl hot add KEY` pins a cold key: its gets spread too; `hot remove` unpins it;
  - the accounting identity, with the router's own packets (fetches, fills, copies, deletes)
    counted apart.

Environment: RINGWAY, RINGWAY_PLAN, RINGWAYCTL (optional).
"""
import os
import random
import sys
import threading
import time

import control_util as cu
import harness as h

HOT = b"hot:celebrity"
COLD = [b"cold:%d" % i for i in range(300)]
EXTRA = """
[hotkeys]
sample_every = 1
interval_ms = 200
threshold_pct = 5
replicas = 3
load_pct = 25
fill_ttl_s = 20
"""


def node_gets(sb):
    out = {}
    for i in range(1, sb.nodes + 1):
        tcp = sb.node_tcp(i)
        try:
            st = tcp.stats()
        finally:
            tcp.close()
        out[i] = (int(st["cmd_get"]), int(st["get_hits"]))
    return out


def get_value(c, key):
    """The value, None for a miss (mcudp request: one complete reply)."""
    r = c.request(b"get %s\r\n" % key)
    if r == b"END\r\n":
        return None
    head, _, rest = r.partition(b"\r\n")
    parts = head.split()
    if parts[0] != b"VALUE":
        raise RuntimeError("get %r: %r" % (key, r))
    return rest[:int(parts[3])]


def skewed_load(t, sb, c, values, n):
    rnd = random.Random(15)
    wrong = 0
    for _ in range(n):
        k = HOT if rnd.random() < 0.7 else rnd.choice(COLD)
        if get_value(c, k) != values[k]:
            wrong += 1
    t.eq(wrong, 0, "%d gets of the skewed load: every one the stored value" % n)


def main():
    h.need_root()
    t = h.Checker("hotkeys")
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    sb = h.Sandbox("hk", nodes=4)
    sb.start_router(ringway, sb.config(extra=EXTRA))
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    ctl = cu.Ctl(sb)
    assign = h.plan_assign(plan, os.path.join(sb.state, "nodes"), "ring", [HOT] + COLD[:1])
    owner = assign[HOT]
    c = sb.client(timeout=2.0)
    values = {k: b"v0-" + k for k in [HOT] + COLD}
    stored = sum(c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)) == b"STORED\r\n"
                 for k, v in values.items())
    t.eq(stored, len(values), "%d keys stored through the router" % len(values))
    start = h.settled_stats(sb)

    # A first round of load: the hot key is found and joins the hot set. The view covers the
    # last interval: it is read while another client keeps the load on.
    skewed_load(t, sb, c, values, 1500)
    stop = threading.Event()

    def background():
        c3, rnd = sb.client(timeout=2.0), random.Random(3)
        while not stop.is_set():
            get_value(c3, HOT if rnd.random() < 0.7 else rnd.choice(COLD))

    bg = threading.Thread(target=background)
    bg.start()
    time.sleep(0.6)
    rc, o = ctl.json("hotkeys", "5")
    stop.set()
    bg.join()
    items = o.get("items", [])
    h.log("hotkeys: %s" % items[:3])
    t.ok(rc == 0 and items and items[0].get("key") == HOT.decode(),
         "hotkeys: %s first" % HOT.decode())
    t.ok(items and items[0].get("owner") == owner, "its owner is the planner's (%s)" % owner)
    t.ok(items and items[0].get("spread") == "hot", "it is spread")
    t.ok(o.get("sampled", 0) > 0 and o.get("bound_rate", -1) >= 0, "the view's bounds shown")

    # Its gets reach every replica: each node's own get hits.
    before = node_gets(sb)
    skewed_load(t, sb, c, values, 2000)
    after = node_gets(sb)
    hits = {i: after[i][1] - before[i][1] for i in after}
    h.log("get hits per node during 2000 skewed gets: %s" % hits)
    t.ok(sum(1 for v in hits.values() if v >= 150) >= 3,
         "at least 3 nodes served the hot key's gets (%s)" % hits)
    t.ok(hits[int(owner[4:])] < 0.7 * 1400, "its owner no longer serves all of them")
    s = h.check_identity(t, sb)
    d = h.delta(start, s)
    h.log("router: hot_spread %d hot_misses %d hot_fetches %d hot_fills %d"
          % (d.get("hot_spread", 0), d.get("hot_misses", 0), d.get("hot_fetches", 0),
             d.get("hot_fills", 0)))
    t.ok(d.get("hot_spread", 0) > 500, "gets spread (%d)" % d.get("hot_spread", 0))
    t.ok(d.get("hot_fills", 0) >= 1, "replicas filled from the owner (%d)" % d.get("hot_fills", 0))
    t.eq(d.get("hot_misses", 0), d.get("hot_fetches", 0) + d.get("hot_tx_failed", 0),
         "each replica miss asked the owner")

    # Consistency: a write acknowledged, then reads from another socket.
    c2 = sb.client(timeout=2.0)
    older, hits2, misses, stored = 0, 0, 0, 0
    for i in range(150):
        v = b"v%d-%d" % (i + 1, random.randrange(1 << 30))
        stored += c.request(b"set %s 0 0 %d\r\n%s\r\n" % (HOT, len(v), v)) == b"STORED\r\n"
        for _ in range(4):
            got = get_value(c2, HOT)
            if got is None:
                misses += 1
            elif got == v:
                hits2 += 1
            else:
                older += 1
    t.eq(stored, 150, "150 sets of the hot key stored")
    h.log("after each set: %d reads of the value, %d misses, %d older" % (hits2, misses, older))
    t.eq(older, 0, "no read after an acknowledged set returned an older value")
    t.ok(hits2 > 300, "reads after sets mostly hit (%d of 600)" % hits2)
    t.ok(c.request(b"delete %s\r\n" % HOT) == b"DELETED\r\n", "delete the hot key")
    t.eq([get_value(c2, HOT) for _ in range(12)].count(None), 12,
         "after the delete: 12 reads, 12 misses")
    v = b"after-delete"
    c.request(b"set %s 0 0 %d\r\n%s\r\n" % (HOT, len(v), v))
    got = [get_value(c2, HOT) for _ in range(12)]
    t.ok(all(g in (v, None) for g in got) and got.count(v) >= 1,
         "after a new set: the new value (or a miss), never the deleted one")

    # A pinned key spreads whatever its rate.
    pin = COLD[7]
    rc, o = ctl.json("hot", "add", pin.decode())
    t.ok(rc == 0 and o.get("pinned") == pin.decode(), "hot add %s" % pin.decode())
    s0 = h.settled_stats(sb)
    for _ in range(60):
        if get_value(c, pin) != values[pin]:
            t.ok(False, "pinned key: the stored value")
            break
    d = h.delta(s0, h.settled_stats(sb))
    t.ok(d.get("hot_spread", 0) >= 20, "the pinned key's gets spread (%d of 60)"
         % d.get("hot_spread", 0))
    rc, o = ctl.json("hot", "remove", pin.decode())
    t.ok(rc == 0, "hot remove %s" % pin.decode())
    rc, o = ctl.json("hot", "remove", pin.decode())
    t.ok(rc != 0 and "not pinned" in o.get("error", ""), "a second remove: not pinned")

    s = h.check_identity(t, sb)
    t.ok(sb.router_alive(), "router still running")
    log = sb.stop_router()
    t.ok("identity ok" in log, "exit print: identity ok")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
