#!/usr/bin/env python3
"""e2e: random meta and binary multi-gets through the router, byte for byte against what the
owning memcached nodes answer when each request is sent to them directly.

A split multi-get's merged reply must be exactly what one memcached holding every key would
send. Keys with random values (some over several datagrams) are stored on their owners
(`ringway-plan assign`); then, through the router:
  - meta `mg ... mn` requests of 2-60 keys: random flags among v k f s c t O q b (client O
    values of random length, base64 keys), misses, repeated keys, one key in plain and
    base64 form in one request;
  - binary GETQ / GETKQ / GATQ / GATKQ ... NOOP requests of 2-60 keys with random opaques,
    misses and repeats;
and each merged reply is compared with the concatenation, in request order, of the owner's
own answer to that one request (sent with `mn` / NOOP after it, which is then cut off), plus
the client's own terminator. Quiet misses stay absent, the client's opaques come back and
the router's tags never show. The accounting identity holds and no node failed.

Environment: RINGWAY, RINGWAY_PLAN; E2E_RANDOM_REQUESTS (per protocol, default 600).
"""
import base64
import os
import random
import struct
import sys

import harness as h
from mcudp import bin_request, bin_responses, bin_set

NKEYS = 1500
ROUNDS = int(os.environ.get("E2E_RANDOM_REQUESTS", "600"))
PAYLOAD_MAX = 1400 - 8  # one request datagram
META_FLAGS = "vkfsctOqb"
BIN_OPS = {"getq": 0x09, "getkq": 0x0D, "gatq": 0x1E, "gatkq": 0x24}


def make_values(rnd):
    values = {}
    for i in range(NKEYS):
        r = rnd.random()
        size = rnd.randint(0, 200) if r < 0.85 else rnd.randint(200, 1400) if r < 0.97 \
            else rnd.randint(1400, 4000)
        values[b"r%d" % i] = (rnd.randrange(1 << 16), bytes(rnd.getrandbits(8)
                                                            for _ in range(size)))
    return values


def store(sb, owners, values):
    by_node = {}
    for k, node in owners.items():
        by_node.setdefault(node, []).append(k)
    for node, keys in by_node.items():
        tcp = sb.node_tcp(node)
        try:
            for k in keys:
                tcp.set(k, values[k][1], flags=values[k][0])
        finally:
            tcp.close()


def pick_keys(rnd, keys, n):
    """n keys: mostly stored, some absent, some repeated."""
    out = []
    for _ in range(n):
        r = rnd.random()
        if r < 0.15:
            out.append(b"absent%d" % rnd.randrange(1 << 20))
        elif r < 0.25 and out:
            out.append(rnd.choice(out))
        else:
            out.append(rnd.choice(keys))
    return out


def meta_line(rnd, key):
    """One random mg line for key: flags among v k f s c t O q b in random order."""
    flags = [f for f in META_FLAGS if rnd.random() < 0.4]
    rnd.shuffle(flags)
    parts = [b"mg"]
    parts.append(base64.b64encode(key) if "b" in flags else key)
    for f in flags:
        if f == "O":
            n = rnd.randint(0, 31)  # memcached's limit (MC_OPAQUE_MAX)
            parts.append(b"O" + bytes(rnd.choice(b"0123456789abcXYZ") for _ in range(n)))
        else:
            parts.append(f.encode())
    return b" ".join(parts) + b"\r\n"


def meta_request(rnd, keys):
    ks = pick_keys(rnd, keys, rnd.randint(2, 60))
    if rnd.random() < 0.2:  # one key in plain and base64 form in one request
        k = rnd.choice(keys)
        ks[rnd.randrange(len(ks))] = k
        ks.append(k)
    lines = [meta_line(rnd, k) for k in ks]
    if rnd.random() < 0.2:
        lines[-1] = b"mg " + base64.b64encode(ks[-1]) + b" b k v\r\n"
    while len(b"".join(lines)) + 4 > PAYLOAD_MAX:
        lines.pop()
        ks.pop()
    return ks, lines


def bin_req_for(rnd, key, op):
    extras = struct.pack("!I", 0) if op.startswith("gat") else b""
    return bin_request(BIN_OPS[op], key, extras, opaque=rnd.randrange(1 << 32))


def binary_request(rnd, keys):
    ks = pick_keys(rnd, keys, rnd.randint(2, 60))
    reqs = [bin_req_for(rnd, k, rnd.choice(list(BIN_OPS))) for k in ks]
    while len(b"".join(reqs)) + 24 > PAYLOAD_MAX:
        reqs.pop()
        ks.pop()
    return ks, reqs


def meta_done(data):
    return data == b"MN\r\n" or data.endswith(b"\r\nMN\r\n")


def bin_done(data):
    try:
        rs = bin_responses(data)
    except ValueError:
        return False
    return bool(rs) and rs[-1]["opcode"] == 0x0A


class Owners:
    """Each request asked of its key's owner directly (absent keys: node 1, any node answers
    a miss alike), answers cached: values do not change during the test."""

    def __init__(self, sb, owners):
        self.owners = owners
        self.direct = {i: sb.node_udp(i, timeout=3.0) for i in range(1, sb.nodes + 1)}
        self.cache = {}

    def answer(self, key, req, term, done):
        if req not in self.cache:
            d = self.direct[self.owners.get(key, 1)]
            got = d.collect_stream(d.send_stream(req + term, done))
            self.cache[req] = got[:len(got) - len(term)] if done is meta_done else got[:-24]
        return self.cache[req]

    def close(self):
        for d in self.direct.values():
            d.close()


def run_phase(t, sb, rnd, keys, own, proto):
    c = sb.client(timeout=3.0)
    bad = timeouts = nkeys = multi = 0
    for n in range(ROUNDS):
        if proto == "meta":
            ks, parts = meta_request(rnd, keys)
            term, done = b"mn\r\n", meta_done
        else:
            ks, parts = binary_request(rnd, keys)
            term = bin_request("noop", opaque=rnd.randrange(1 << 32))
            done = bin_done
        want = b"".join(own.answer(k, p, term, done) for k, p in zip(ks, parts))
        want += b"MN\r\n" if proto == "meta" else \
            bytes([0x81]) + term[1:]  # NOOP response: the request's header as a response
        nkeys += len(ks)
        try:
            # A stream: keys that all live on one node are not split, and that node answers
            # each response as a message of its own.
            got = c.collect_stream(c.send_stream(b"".join(parts) + term, done))
        except h.Timeout:
            timeouts += 1
            continue
        multi += len(got) > PAYLOAD_MAX
        if got != want:
            bad += 1
            if bad <= 3:
                at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                          min(len(got), len(want)))
                h.log("%s request %d (%d keys) differs at byte %d of %d (want %d):\n"
                      "  sent %r\n  got  %r\n  want %r"
                      % (proto, n, len(ks), at, len(got), len(want), b"".join(parts),
                         got[max(0, at - 100):at + 200], want[max(0, at - 100):at + 200]))
    h.log("%s: %d random multi-gets (%d keys, %d replies over several datagrams) compared "
          "byte for byte with the owners' own answers: %d differ, %d timed out"
          % (proto, ROUNDS, nkeys, multi, bad, timeouts))
    t.eq(bad, 0, "%s: %d random multi-gets byte-identical to the owners' answers"
         % (proto, ROUNDS))
    t.eq(timeouts, 0, "%s: no timeout" % proto)
    t.eq(c.strays, [], "%s: no stray datagram" % proto)
    c.close()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e multiget-random")
    sb = h.Sandbox("mr")
    sb.start_router(ringway, sb.config(request_ms=1000), lcores="0@0,1@1,2@1", qpairs=2)
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    rnd = random.Random(int(os.environ.get("E2E_SEED", "20")))
    values = make_values(rnd)
    assign = h.plan_assign(plan, os.path.join(sb.state, "nodes"), "ring", list(values))
    owners = {k: int(name[4:]) for k, name in assign.items()}
    t.ok(len(set(owners.values())) == sb.nodes, "keys on every node")
    store(sb, owners, values)
    start = h.settled_stats(sb)
    own = Owners(sb, owners)
    keys = sorted(values)
    run_phase(t, sb, rnd, keys, own, "meta")
    run_phase(t, sb, rnd, keys, own, "binary")
    own.close()
    s = h.check_identity(t, sb)
    dl = h.delta(start, s)
    t.ok(dl.get("multiget_split", 0) >= ROUNDS, "multi-gets split (%d)"
         % dl.get("multiget_split", 0))
    t.eq(dl.get("multiget_node_errors", 0) + dl.get("multiget_partial", 0) +
         dl.get("multiget_refused", 0), 0, "no node error, partial reply or refusal")
    t.eq(dl.get("multiget_merged", 0), dl.get("multiget_split", 0),
         "every split multi-get merged")
    sb.down()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
