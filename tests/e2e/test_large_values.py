#!/usr/bin/env python3
"""e2e: large values come back whole through the router as multi-datagram replies.

For each size (1 byte .. 500 KB, around the 1400-byte datagram boundary too) a key's owner
is found through the router (a small set, then every node asked directly), the large value
is stored on that node directly over TCP, and `get` / `gets` / binary `getk` / meta `mg`
through the router must return it whole: the reassembled reply equal to the node's own
answer over UDP, datagram for datagram, under the client's request id. Then several large
gets in flight at once. The router runs two workers, so replies also cross between them.
The router's returned counter must move by the datagrams returned.

Environment: RINGWAY.
"""
import random
import sys

import harness as h
from mcudp import bin_request, bin_responses

SIZES = [1, 1300, 1400, 1401, 2800, 10000, 65536, 100000, 250000, 500 * 1024]


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e large values")
    sb = h.Sandbox("lv")
    # Two workers (af_packet fanout spreads flows over two queue pairs): replies that land on
    # the other worker than the one whose slot waits for them are handed over, datagram by
    # datagram, and must still come back whole.
    sb.start_router(ringway, sb.config(), lcores="0@0,1@1,2@1", qpairs=2)
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    rnd = random.Random(7)
    stored = {}
    for size in SIZES:
        key = b"large:%d" % size
        holders = h.owner_by_router(sb, key)
        if not t.eq(len(holders), 1, "%r: one owner through the router" % key):
            continue
        value = bytes(rnd.getrandbits(8) for _ in range(size))
        tcp = sb.node_tcp(holders[0])
        tcp.set(key, value, flags=size)
        tcp.close()
        stored[key] = (holders[0], value)

    before = h.settled_stats(sb)
    returned = 0
    c = sb.client(timeout=5.0)
    for key, (node, value) in stored.items():
        d = sb.node_udp(node, timeout=5.0)
        for name, req in (("get", b"get %s\r\n" % key), ("gets", b"gets %s\r\n" % key),
                          ("mg", b"mg %s v f s\r\n" % key),
                          ("binary getk", bin_request("getk", key, opaque=len(value)))):
            try:
                r1 = c.request(req)
                n1 = c.last_datagrams
                returned += n1
            except h.Timeout as e:
                t.ok(False, "%s %r (%d bytes): whole reply through the router (%s)"
                     % (name, key, len(value), e))
                continue
            r2 = d.request(req)
            t.ok(r1 == r2 and n1 == d.last_datagrams,
                 "%s %r (%d bytes, node%d): %d datagrams, identical to the node's reply"
                 % (name, key, len(value), node, n1))
            if name == "get":
                t.ok(value in r1, "get %r: the value itself is in the reply" % key)
            if name == "binary getk":
                rs = bin_responses(r1)
                t.ok(len(rs) == 1 and rs[0]["value"] == value,
                     "binary getk %r: value whole" % key)
        d.close()
    t.eq(c.strays, [], "no stray datagram at the client")

    # Several large replies in flight at once.
    big = [k for k, (_, v) in stored.items() if len(v) >= 65536]
    ids = {c.send(b"get %s\r\n" % k): k for k in big}
    for rid, k in ids.items():
        try:
            r = c.collect(rid, timeout=10.0)
            returned += c.last_datagrams
            t.ok(stored[k][1] in r, "concurrent get %r (%d bytes) whole" % (k, len(stored[k][1])))
        except h.Timeout as e:
            t.ok(False, "concurrent get %r whole (%s)" % (k, e))
    t.eq(c.strays, [], "no stray datagram after concurrent large gets")
    c.close()

    after = h.check_identity(t, sb)
    dl = h.delta(before, after)
    t.eq(dl["returned"], returned, "router counted every reply datagram it returned")
    t.eq(h.own_drops(dl["drops"]), {}, "no drop while returning large values")
    t.eq(after.get("workers"), sb.workers, "router ran %d worker(s)" % sb.workers)
    h.log("replies handed over between workers: %d" % dl.get("handed_over", 0))
    # No PMD of the sandbox takes rte_flow rules: the start-up says so once, the gauge is 0.
    if sb.workers > 1:
        t.eq(sb.router_log().count("reply steering on port"), 1,
             "start-up logs the reply steering once")
        t.ok("reply steering on port 0: handoff" in sb.router_log(),
             "reply steering: handoff (the port refuses rte_flow rules)")
        t.eq(after.get("reply_steering_rules"), 0, "gauge reply_steering_rules is 0")
    sb.stop_router()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
