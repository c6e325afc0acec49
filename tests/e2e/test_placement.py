#!/usr/bin/env python3
"""e2e: placement through the router equals `ringway-plan assign` for the same config.

10,000 distinct keys are set through the router (ASCII over UDP), then every node is asked
directly at its own address (TCP multi-gets): each key must be on exactly the node the
planner names for the same members and algorithm, and on no other. Repeated for each
algorithm in E2E_PLACEMENT_ALGOS (default: all seven), restarting the router with that
algorithm and a fresh key space.

Environment: RINGWAY, RINGWAY_PLAN, E2E_PLACEMENT_KEYS (default 10000).
"""
import os
import random
import sys
import time

import harness as h

NKEYS = int(os.environ.get("E2E_PLACEMENT_KEYS", "10000"))
ALGOS = os.environ.get("E2E_PLACEMENT_ALGOS", "ring ketama twemproxy jump rendezvous maglev modulo").split()
WINDOW = 32


def set_all(sb, keys, value_of, sockets=32):
    """Set every key through the router from `sockets` client sockets (distinct source ports,
    so the flows spread over the router's workers), WINDOW requests in flight; returns the
    failures and any stray datagrams. 32 flows: af_packet's fanout hashes each to one of two
    workers, and with 8 all landed on one worker about once in 128 algorithms (seen once in a
    full e2e run: "every worker forwarded" failed with [10001, 0]); with 32, once in 2^31."""
    clients = [sb.client(timeout=2.0) for _ in range(sockets)]
    failed = []
    try:
        todo = list(keys)
        while todo:
            batch, todo = todo[:WINDOW], todo[WINDOW:]
            sent = []
            for j, k in enumerate(batch):
                c = clients[j % sockets]
                v = value_of(k)
                sent.append((c, c.send(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)), k))
            for c, rid, k in sent:
                try:
                    r = c.collect(rid)
                except h.Timeout:
                    r = None
                if r != b"STORED\r\n":
                    # One retry: a lost datagram is not a placement error.
                    try:
                        v = value_of(k)
                        r = c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v))
                    except h.Timeout:
                        r = None
                    if r != b"STORED\r\n":
                        failed.append((k, r))
        return failed, [s for c in clients for s in c.strays]
    finally:
        for c in clients:
            c.close()


def holdings(sb, keys, value_of):
    """{key: [node indexes holding it with the right value]}."""
    out = {k: [] for k in keys}
    for i in range(1, sb.nodes + 1):
        t = sb.node_tcp(i)
        try:
            for j in range(0, len(keys), 100):
                got = t.get_many(keys[j:j + 100])
                for k, v in got.items():
                    if v == value_of(k):
                        out[k].append(i)
        finally:
            t.close()
    return out


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e placement")
    sb = h.Sandbox("pl")
    nodes_file = os.path.join(sb.state, "nodes")
    rnd = random.Random(4242)
    for algo in ALGOS:
        tag = "%s%d" % (algo, rnd.randrange(1 << 30))
        keys = [b"pl:%s:%d:%x" % (tag.encode(), i, rnd.randrange(1 << 40))
                for i in range(NKEYS)]

        def value_of(k):
            return b"v" + k[-6:]

        # Two workers, each with its own replica of the placement: clients' flows are spread
        # over both (af_packet fanout), so both replicas must agree with the planner.
        sb.start_router(ringway, sb.config(algo=algo), lcores="0@0,1@1,2@1", qpairs=2)
        t.ok(sb.wait_serving(), "[%s] router serves every node" % algo)
        t0 = time.monotonic()
        failed, strays = set_all(sb, keys, value_of)
        h.log("[%s] %d sets through the router in %.1f s" % (algo, NKEYS, time.monotonic() - t0))
        t.eq(failed[:5], [], "[%s] every set through the router STORED (%d failed)"
             % (algo, len(failed)))
        t.eq(strays, [], "[%s] no stray datagram at the client" % algo)
        want = h.plan_assign(plan, nodes_file, algo, keys)
        t.eq(len(want), NKEYS, "[%s] ringway-plan assigned every key" % algo)
        held = holdings(sb, keys, value_of)
        wrong = [(k, held[k], want.get(k)) for k in keys
                 if ["node%d" % i for i in held[k]] != [want.get(k)]]
        t.eq(wrong[:5], [], "[%s] every key on exactly the node ringway-plan names, and on no "
             "other (%d of %d wrong)" % (algo, len(wrong), NKEYS))
        per = {}
        for k in keys:
            per[want.get(k)] = per.get(want.get(k), 0) + 1
        h.log("[%s] planner split: %s" % (algo, ", ".join(
            "%s %d" % (n, c) for n, c in sorted(per.items(), key=lambda x: str(x[0])))))
        t.ok(len(per) == sb.nodes, "[%s] keys spread over all %d nodes" % (algo, sb.nodes))
        per_worker = [h.flatten_stats(sb.telemetry("/ringway/stats,%d" % w))["forwarded"]
                      for w in range(sb.workers)]
        t.ok(all(f > 0 for f in per_worker), "[%s] every worker forwarded requests (%r)"
             % (algo, per_worker))
        h.check_identity(t, sb)
        sb.stop_router()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
