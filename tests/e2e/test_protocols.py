#!/usr/bin/env python3
"""e2e: ASCII, meta and binary commands through the router from our own UDP client; every
reply must be byte-identical to what the owning node returns when asked directly (UDP, at
its own address), with the client's request id. Mutating commands run on the same prepared
state both ways; binary replies then differ only in CAS, which is masked (a second store
gets a new CAS by design). Keyless commands: `version` is answered by the router, admin
commands are refused with an error and reach no node (flush_all must not flush). A `get` of
keys on different nodes gets an error or the complete right answer, never a partial one.

Environment: RINGWAY.
"""
import struct
import sys

import harness as h
from mcudp import bin_request, bin_responses, bin_set, mask_bin_cas

KEYS = [b"proto:%d" % i for i in range(24)]


def ascii_cases():
    set_a = lambda t, k: t.set(k, b"hello world", flags=42)  # noqa: E731
    set_n = lambda t, k: t.set(k, b"10", flags=0)  # noqa: E731
    return [
        # name, prepare, request(key), mutating
        ("ascii get hit", set_a, lambda k: b"get %s\r\n" % k, False),
        ("ascii gets hit", set_a, lambda k: b"gets %s\r\n" % k, False),
        ("ascii get miss", None, lambda k: b"get %s:none\r\n" % k, False),
        ("ascii set", None, lambda k: b"set %s 7 0 5\r\nvalue\r\n" % k, True),
        ("ascii add existing", set_a, lambda k: b"add %s 0 0 1\r\nx\r\n" % k, True),
        ("ascii append", set_a, lambda k: b"append %s 0 0 3\r\n!!!\r\n" % k, True),
        ("ascii incr", set_n, lambda k: b"incr %s 5\r\n" % k, True),
        ("ascii decr", set_n, lambda k: b"decr %s 3\r\n" % k, True),
        ("ascii incr non-numeric", set_a, lambda k: b"incr %s 1\r\n" % k, True),
        ("ascii touch", set_a, lambda k: b"touch %s 0\r\n" % k, True),
        ("ascii cas mismatch", set_a, lambda k: b"cas %s 0 0 1 1\r\nz\r\n" % k, True),
        ("ascii delete", set_a, lambda k: b"delete %s\r\n" % k, True),
    ]


def meta_cases():
    set_a = lambda t, k: t.set(k, b"meta value", flags=5)  # noqa: E731
    set_n = lambda t, k: t.set(k, b"41", flags=0)  # noqa: E731
    return [
        ("meta mg v f t c k s", set_a, lambda k: b"mg %s v f t c k s\r\n" % k, False),
        ("meta mg opaque", set_a, lambda k: b"mg %s v O4242\r\n" % k, False),
        ("meta mg miss", None, lambda k: b"mg %s:none v\r\n" % k, False),
        ("meta ms", None, lambda k: b"ms %s 3 T0 F9\r\nabc\r\n" % k, True),
        ("meta md", set_a, lambda k: b"md %s\r\n" % k, True),
        ("meta ma incr", set_n, lambda k: b"ma %s v\r\n" % k, True),
        ("meta ma decr by 5", set_n, lambda k: b"ma %s MD D5 v\r\n" % k, True),
    ]


def binary_cases():
    set_a = lambda t, k: t.set(k, b"binary value", flags=0x01020304)  # noqa: E731
    set_n = lambda t, k: t.set(k, b"100", flags=0)  # noqa: E731
    incr = lambda k, op: bin_request(op, k, struct.pack("!QQI", 7, 0, 0), opaque=0x77)  # noqa
    return [
        ("binary get hit", set_a, lambda k: bin_request("get", k, opaque=0xDEADBEEF), False),
        ("binary getk hit", set_a, lambda k: bin_request("getk", k, opaque=1), False),
        ("binary get miss", None, lambda k: bin_request("get", k + b":none", opaque=2), False),
        ("binary getk miss", None, lambda k: bin_request("getk", k + b":none", opaque=3),
         False),
        ("binary set", None, lambda k: bin_set(k, b"new value", 9, 0, opaque=4), True),
        ("binary add existing", set_a, lambda k: bin_set(k, b"x", op="add", opaque=5), True),
        ("binary replace", set_a, lambda k: bin_set(k, b"replaced", op="replace", opaque=6),
         True),
        ("binary append", set_a, lambda k: bin_request("append", k, value=b"++", opaque=7),
         True),
        ("binary delete", set_a, lambda k: bin_request("delete", k, opaque=8), True),
        ("binary incr", set_n, lambda k: incr(k, "incr"), True),
        ("binary decr", set_n, lambda k: incr(k, "decr"), True),
        ("binary touch", set_a, lambda k: bin_request("touch", k, struct.pack("!I", 0),
                                                      opaque=9), True),
        ("binary gat", set_a, lambda k: bin_request("gat", k, struct.pack("!I", 0),
                                                    opaque=10), True),
    ]


def run_case(t, sb, owners, idx, case, binary):
    name, prepare, req_of, mutating = case
    key = KEYS[idx % len(KEYS)]
    node = owners[key]
    req = req_of(key)
    tcp = sb.node_tcp(node)
    via, direct = sb.client(), sb.node_udp(node)
    try:
        if prepare:
            prepare(tcp, key)
        try:
            r1 = via.request(req)
            n1 = via.last_datagrams
        except h.Timeout as e:
            t.ok(False, "%s (key on node%d): reply through the router (%s)" % (name, node, e))
            return
        if prepare and mutating:
            prepare(tcp, key)
        elif mutating:
            tcp.sock.sendall(b"delete %s\r\n" % key)
            tcp.line()
        r2 = direct.request(req)
        n2 = direct.last_datagrams
        if binary and mutating:
            r1, r2 = mask_bin_cas(r1), mask_bin_cas(r2)
        t.eq(r1, r2, "%s (node%d): router reply byte-identical to the node's" % (name, node))
        t.eq(n1, n2, "%s: same number of datagrams (%d)" % (name, n2))
        t.eq(via.strays, [], "%s: no stray datagram at the client" % name)
    finally:
        tcp.close()
        via.close()
        direct.close()


def keyless(t, sb):
    c = sb.client()
    try:
        r = c.request(b"version\r\n")
        t.ok(r.startswith(b"VERSION ") and r.endswith(b"\r\n"),
             "ascii version answered by the router (%r)" % r)
        r = bin_responses(c.request(bin_request("version", opaque=0x55)))
        t.ok(len(r) == 1 and r[0]["opcode"] == 0x0B and r[0]["status"] == 0 and
             r[0]["opaque"] == 0x55 and r[0]["value"],
             "binary version answered by the router with the opaque echoed")
        # Admin commands that would reach an arbitrary node are refused with an error.
        probe = KEYS[0]
        owner = h.owner_by_router(sb, probe, b"survives flush")
        for cmd in (b"flush_all\r\n", b"stats\r\n", b"verbosity 1\r\n",
                    b"cache_memlimit 100\r\n", b"shutdown\r\n"):
            try:
                r = c.request(cmd)
            except h.Timeout:
                r = b"(no reply)"
            t.ok(r.startswith(b"SERVER_ERROR") or r.startswith(b"CLIENT_ERROR"),
                 "%r refused with an error reply (%r)" % (cmd.strip(), r[:60]))
        tcp = sb.node_tcp(owner[0])
        t.eq(tcp.get(probe), b"survives flush", "flush_all through the router flushed nothing")
        tcp.close()
        t.ok(sb.nodes_alive(), "shutdown through the router stopped no node")
        t.eq(c.strays, [], "keyless commands: no stray datagram")
    finally:
        c.close()


def multi_get(t, sb, owners):
    a = KEYS[0]
    b = next(k for k in KEYS if owners[k] != owners[a])
    for k in (a, b):
        tcp = sb.node_tcp(owners[k])
        tcp.set(k, b"v-" + k)
        tcp.close()
    c = sb.client()
    try:
        r = c.request(b"get %s %s\r\n" % (a, b))
    except h.Timeout:
        r = b"(no reply)"
    finally:
        c.close()
    whole = b"VALUE %s 0 %d\r\nv-%s\r\nVALUE %s 0 %d\r\nv-%s\r\nEND\r\n" % (
        a, len(a) + 2, a, b, len(b) + 2, b)
    t.ok(r == whole or r.startswith(b"SERVER_ERROR") or r.startswith(b"CLIENT_ERROR"),
         "get of keys on two nodes: an error or the whole answer, never partial (%r)" % r[:80])


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e protocols")
    # This one runs the router with --no-huge (the fallback when no hugepages can be had).
    sb = h.Sandbox("pr", no_huge=True)
    sb.start_router(ringway, sb.config())
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    owners = {}
    for k in KEYS:
        holders = h.owner_by_router(sb, k)
        t.eq(len(holders), 1, "key %r stored on exactly one node through the router" % k)
        owners[k] = holders[0] if holders else 1
    t.ok(len(set(owners.values())) >= min(3, sb.nodes), "test keys spread over the nodes")

    idx = 0
    for case in ascii_cases():
        run_case(t, sb, owners, idx, case, False)
        idx += 1
    for case in meta_cases():
        run_case(t, sb, owners, idx, case, False)
        idx += 1
    for case in binary_cases():
        run_case(t, sb, owners, idx, case, True)
        idx += 1

    # Meta no-op alone and binary noop alone: keyless, answered by router or node alike.
    c, d = sb.client(), sb.node_udp(1)
    for name, req in (("meta mn", b"mn\r\n"), ("binary noop", bin_request("noop", opaque=3))):
        try:
            r1 = c.request(req)
            t.eq(r1, d.request(req), "%s answered like a node would" % name)
        except h.Timeout:
            t.ok(False, "%s: reply" % name)
    c.close()
    d.close()

    keyless(t, sb)
    multi_get(t, sb, owners)
    h.check_identity(t, sb)
    t.ok(sb.router_alive(), "router still running")
    sb.stop_router()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
