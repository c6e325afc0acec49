#!/usr/bin/env python3
"""e2e: hostile input. Every malformed or unwelcome frame from clients/hostile.py is dropped
and counted under its reason (and nothing else moves: no forward, no reply), the router keeps
serving, and no forged or stale reply ever reaches a client:

  - the catalogue: truncated headers, lying IP/UDP lengths, fragments, non-IPv4, non-UDP,
    other ports, no memcached frame, 251-byte keys, multi-datagram requests, forged replies
    from a non-node address, clients outside the allowed prefixes;
  - forged replies aimed at a LIVE request slot (its node frozen with SIGSTOP, the router's
    source port and request id read off the node's veth) from a non-node address and from
    another node: dropped as wrong source; the client then gets exactly the real reply;
  - a replayed reply (the node's real reply frame captured and sent again): dropped;
  - a late reply (node frozen past the request timeout, then thawed): dropped; the client
    never sees it.
Afterwards the router serves every node and the packet accounting identity holds.

In AF_XDP mode (RINGWAY_E2E_PORT=af_xdp) the XDP steering program decides first: frames of
the families in STEER_FAMILY (bad headers, fragments, not IPv4/UDP, other ports and
addresses) go to the router namespace's kernel and must move exactly their steer counter
(/ringway/steer) and never reach the router (its rx unchanged); everything else is steered
to the router (to_xsk_* moves by one) and checked against the router's drop reasons as above.

Environment: RINGWAY, RINGWAY_E2E_PORT.
"""
import os
import signal
import sys
import time

import harness as h
from hostile import Net, Sender, Sniffer, cases, eth, ipv4, udp, ETH_P_IP

# The router's drop reasons each family of hostile frame may be counted under.
FAMILY = {
    "bad_ip": {"truncated_ip", "bad_ip"},
    "short_ip_len": {"truncated_ip", "bad_ip", "truncated_udp"},
    "bad_udp": {"truncated_udp", "bad_udp_length"},
    "fragment": {"ip_fragment"},
    "not_ipv4": {"not_ipv4"},
    "not_udp": {"not_udp"},
    "udp_port": {"bad_port"},
    "bad_memcached": {"mc_bad_frame", "mc_bad_request"},
    "not_for_us": {"not_our_ip"},
    "key_too_long": {"mc_key_too_long"},
    "multi_datagram": {"mc_multi_datagram"},
    "client_not_allowed": {"client_denied"},
    "forged_reply": {"reply_no_slot", "reply_wrong_source"},
}
WRONG_SOURCE = {"reply_wrong_source"}
# DPDK 22.11's net_af_packet joins its socket to a PACKET_FANOUT group with
# PACKET_FANOUT_FLAG_DEFRAG, always: the kernel reassembles IPv4 fragments before the router
# sees them, so a lone fragment never arrives (and a complete set arrives as one whole
# datagram). On this port a fragment case passes when it is held for reassembly OR never
# reaches the router, and in both cases nothing is forwarded or returned (one_held). In
# AF_XDP mode the steering program gives UDP fragments to the router (to_xsk_fragment).
# Reassembly itself is covered by the dp suite (test_frag) and e2e-frag.
FRAGMENTS = {"fragment"}
# Request slot lifetime: long enough for the live-slot attacks on a loaded 2-vCPU machine.
REQUEST_S = 2.5
STALE = {"reply_no_slot", "reply_stale"}
# AF_XDP mode: the families the steering program passes to the kernel, and the steer
# counters (lib/steer/steer_abi.h) each may move. A lying IP total length shorter than the
# UDP header's claim is caught at whichever header notices first.
STEER_FAMILY = {
    "bad_ip": {"pass_bad_ipv4"},
    "short_ip_len": {"pass_bad_ipv4", "pass_bad_udp"},
    "bad_udp": {"pass_bad_udp"},
    "not_ipv4": {"pass_not_ipv4"},
    "not_udp": {"pass_not_udp"},
    "udp_port": {"pass_other_port"},
    "not_for_us": {"pass_other_addr"},
}
# Traffic of the kernel's own that may cross the program during a case: ARP (the client's
# and the nodes' neighbour entries for the router being refreshed).
STEER_NOISE = {"pass_not_ipv4"}
TO_XSK = ("to_xsk_request", "to_xsk_reply")


def wait_rx(sb, before, n, timeout=2.0):
    end = time.monotonic() + timeout
    while True:
        s = sb.stats()
        if s["rx"] - before["rx"] >= n or time.monotonic() > end:
            time.sleep(0.05)
            return sb.stats()
        time.sleep(0.02)


def steer_delta(a, b):
    return {k: b[k] - a.get(k, 0) for k in b if b[k] != a.get(k, 0)}


def one_pass(t, sb, what, send, counters):
    """AF_XDP mode: send(); the steering program must pass the frame to the kernel under
    exactly one of `counters` (moved by one), steer nothing to the router, and the router
    must not see it. Retried (twice) when kernel ARP crossed the program meanwhile."""
    for attempt in range(3):
        before, sbefore = sb.stats(), sb.steer()
        send()
        end = time.monotonic() + 1.0
        while True:
            ds = steer_delta(sbefore, sb.steer())
            if any(k.startswith("pass_") for k in ds) or time.monotonic() > end:
                break
            time.sleep(0.01)
        time.sleep(0.05)
        ds = steer_delta(sbefore, sb.steer())
        d = h.delta(before, sb.stats())
        ours = {k: v for k, v in ds.items() if k in counters}
        others = {k: v for k, v in ds.items() if k not in counters}
        good = (len(ours) == 1 and list(ours.values()) == [1] and not others and
                d["rx"] == 0)
        noisy = set(others) <= STEER_NOISE and (others or sum(ours.values()) > 1)
        if good or not noisy or attempt == 2:
            break
    t.ok(good, "%s: passed to the kernel once as %s, never reached the router (steer moved "
         "%r, router rx +%d)" % (what, "/".join(sorted(counters)), ds, d["rx"]))


def one_drop(t, sb, what, send, reasons, absorbed_ok=False):
    """send(); the router must count exactly one drop, under one of `reasons`, and nothing
    forwarded or returned. absorbed_ok: the frame may also never reach the router at all
    (rx unchanged), for what the port's kernel side holds back (see FRAGMENTS). In AF_XDP
    mode the steering program must also have steered it to the router (to_xsk_* + 1)."""
    before = sb.stats()
    sbefore = sb.steer() if sb.xdp else None
    send()
    after = wait_rx(sb, before, 1, timeout=0.5 if absorbed_ok else 2.0)
    d = h.delta(before, after)
    moved = h.own_drops(d["drops"])  # the bridge's flooded frames are not this one
    good = (len(moved) == 1 and list(moved.values()) == [1] and set(moved) <= reasons and
            d["forwarded"] == 0 and d["returned"] == 0)
    if sb.xdp:
        ds = steer_delta(sbefore, sb.steer())
        good = good and sum(ds.get(k, 0) for k in TO_XSK) == 1
        what += " (steered: %r)" % {k: v for k, v in ds.items() if k in TO_XSK}
    if absorbed_ok and not good and d["rx"] == 0 and not moved and d["answered"] == 0:
        t.ok(True, "%s: never reached the router (held by the af_packet socket's kernel "
             "defragmentation), nothing forwarded or returned" % what)
        return
    t.ok(good, "%s: dropped once as %s (drops moved %r, forwarded %d, returned %d)"
         % (what, "/".join(sorted(reasons)), moved, d["forwarded"], d["returned"]))


def one_held(t, sb, what, send, absorbed_ok=False):
    """send() a lone fragment of a UDP datagram to the router: the router holds it for
    reassembly (ip_fragments_held + 1, no drop, nothing forwarded or returned; AF_XDP: steered
    as to_xsk_fragment), then drops it as ip_fragment_timeout once [timeouts] fragment_ms has
    passed (waited for here, so the next case sees no late drop). absorbed_ok: it may also
    never reach the router (af_packet's kernel holds IPv4 fragments, see FRAGMENTS)."""
    before = sb.stats()
    sbefore = sb.steer() if sb.xdp else None
    send()
    after = wait_rx(sb, before, 1, timeout=0.5 if absorbed_ok else 2.0)
    d = h.delta(before, after)
    moved = h.own_drops(d["drops"])
    good = (d.get("ip_fragments_held", 0) == 1 and not moved and d["forwarded"] == 0 and
            d["returned"] == 0)
    if sb.xdp:
        ds = steer_delta(sbefore, sb.steer())
        good = good and ds.get("to_xsk_fragment", 0) == 1
        what += " (steered: %r)" % {k: v for k, v in ds.items() if k.startswith("to_xsk")}
    if absorbed_ok and not good and d["rx"] == 0 and not moved and d["answered"] == 0:
        t.ok(True, "%s: never reached the router (held by the af_packet socket's kernel "
             "defragmentation), nothing forwarded or returned" % what)
        return
    t.ok(good, "%s: held for reassembly, nothing dropped, forwarded or returned (drops "
         "moved %r, held %+d)" % (what, moved, d.get("ip_fragments_held", 0)))
    end = time.monotonic() + 5.0
    while time.monotonic() < end:
        d = h.delta(before, sb.stats())
        if d.get("ip_fragments_held", 0) == 0:
            break
        time.sleep(0.05)
    t.ok(h.own_drops(d["drops"]) == {"ip_fragment_timeout": 1} and
         d.get("ip_fragments_held", 0) == 0,
         "%s: then dropped once as ip_fragment_timeout (drops moved %r)"
         % (what, h.own_drops(d["drops"])))


def node_pid(sb, i):
    with open(os.path.join(sb.state, "node%d.pid" % i)) as f:
        return int(f.read())


def catch_request(sniffer, router_ip, node_ip, wait=1.0):
    """The router's forwarded request seen on the node's veth: (sport, req_id)."""
    def is_it(f, src, dst, sport, dport, payload):
        return src == router_ip and dst == node_ip and len(payload) >= 8

    for f, src, dst, sport, dport, payload in sniffer.udp_frames(wait, until=is_it):
        if is_it(f, src, dst, sport, dport, payload):
            return sport, int.from_bytes(payload[:2], "big")
    return None


def live_slot_attacks(t, sb, net, sender, key, node):
    """Forged replies at a live slot, then the real reply; then replay it."""
    nip = sb.node_ips[node - 1]
    other = sb.node_ips[node % sb.nodes]
    sniffer = Sniffer("veth0", sb.env["NODE%d_NS" % node])
    pid = node_pid(sb, node)
    c = sb.client(timeout=3.0)
    h.freeze(pid)
    try:
        t0 = time.monotonic()
        rid = c.send(b"get %s\r\n" % key)
        seen = catch_request(sniffer, sb.router[0], nip)
        t.ok(seen is not None, "router's forwarded request seen on node%d's veth" % node)
        if seen is None:
            return
        sport, fwd_id = seen
        forged = b"VALUE %s 0 6\r\nforged\r\nEND\r\n" % key
        for src in ("198.18.1.250", other):
            frame = net.udp_frame(fwd_id.to_bytes(2, "big") + b"\0\0\0\1\0\0" + forged,
                                  src=src, sport=11211, dport=sport)
            one_drop(t, sb, "forged reply from %s to the live slot (port %d, id %d)"
                     % (src, sport, fwd_id), lambda: sender.send(frame), WRONG_SOURCE)
        t.ok(c.expect_silence(0.2), "no forged reply reached the client")
        t.ok(time.monotonic() - t0 < 0.8 * REQUEST_S, "attacks done while the slot lived "
             "(%.2f s of %.1f s)" % (time.monotonic() - t0, REQUEST_S))
    finally:
        os.kill(pid, signal.SIGCONT)
    try:
        r = c.collect(rid)
    except h.Timeout:
        r = None
    t.eq(r, b"VALUE %s 0 4\r\nreal\r\nEND\r\n" % key, "client got the node's real reply")
    # Replay the node's real reply, captured on its veth, from the node's own veth.
    replies = [f for f, src, dst, sp, dp, p in sniffer.udp_frames(0.3)
               if src == nip and dst == sb.router[0] and dp == sport]
    sniffer.close()
    t.ok(len(replies) == 1, "the node's reply captured for replay")
    if replies:
        node_sender = Sender("veth0", sb.env["NODE%d_NS" % node])
        one_drop(t, sb, "replayed reply", lambda: node_sender.send(replies[0]), STALE)
        node_sender.close()
    t.ok(c.expect_silence(0.3), "no replayed reply reached the client")
    t.eq(c.strays, [], "no stray datagram at the attacked client")
    c.close()


def late_reply(t, sb, key, node):
    pid = node_pid(sb, node)
    c = sb.client(timeout=0.2)
    before = sb.stats()
    h.freeze(pid)
    try:
        rid = c.send(b"get %s\r\n" % key)
        time.sleep(REQUEST_S + 0.6)
    finally:
        os.kill(pid, signal.SIGCONT)
    # rx also counts the answers to the router's probes of the frozen node: wait for the late
    # reply's own drop, not for a number of packets.
    end = time.monotonic() + 3.0
    while True:
        d = h.delta(before, sb.stats())
        if any(not k.startswith("probe_") for k in d["drops"]) or time.monotonic() > end:
            break
        time.sleep(0.02)
    time.sleep(0.1)
    d = h.delta(before, sb.stats())
    t.eq(d.get("slots_expired", 1), 1, "the unanswered slot expired")
    # The frozen node is probed once its request times out (failover's health check); the
    # answers to those probes arrive late too and are dropped as probe_stale: not client
    # traffic.
    drops = {k: v for k, v in d["drops"].items() if not k.startswith("probe_")}
    t.ok(set(drops) <= STALE and sum(drops.values()) == 1,
         "late reply dropped as stale (%r)" % d["drops"])
    try:
        r = c.collect(rid, timeout=0.5)
    except h.Timeout:
        r = None
    t.eq(r, None, "the late reply never reached the client")
    t.eq(c.strays, [], "no stray datagram at the client")
    c.close()


def outside_client(t, sb):
    """A real UDP client bound to an address outside the allowed prefixes gets nothing."""
    c = sb.client(timeout=0.5, bind=sb.env["CLIENT_OUTSIDE_IP"])
    before = sb.stats()
    rid = c.send(b"get hostile:ok\r\n")
    try:
        r = c.collect(rid)
    except h.Timeout:
        r = None
    d = h.delta(before, sb.stats())
    t.eq(r, None, "client outside the allowed prefixes got no reply")
    t.eq(d["drops"], {"client_denied": 1}, "counted as client_denied")
    c.close()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e hostile")
    sb = h.Sandbox("ho")
    sb.start_router(ringway, sb.config(request_ms=int(REQUEST_S * 1000)))
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    env = sb.env
    net = Net(env["ROUTER_MAC"], env["CLIENT_MAC"], env["ROUTER_IP"], env["CLIENT_IP"],
              sb.node_ips, outside_ip=env["CLIENT_OUTSIDE_IP"])
    sender = Sender("veth0", sb.client_ns)
    # A listener on the client port the hostile frames claim as source: nothing may come back.
    victim = h.socket_in(sb.client_ns)
    victim.bind((env["CLIENT_IP"], 40000))
    victim.setblocking(False)

    steer_start = sb.steer() if sb.xdp else None
    for name, frame, family in cases(net):
        if sb.xdp and family in STEER_FAMILY:
            one_pass(t, sb, name, lambda f=frame: sender.send(f), STEER_FAMILY[family])
            continue
        if family in FRAGMENTS:  # UDP fragments to the router: reassembled there
            one_held(t, sb, name, lambda f=frame: sender.send(f), absorbed_ok=True)
            continue
        one_drop(t, sb, name, lambda f=frame: sender.send(f), FAMILY[family])
    try:
        got = victim.recv(65536)
    except BlockingIOError:
        got = None
    t.eq(got, None, "nothing came back to the hostile frames' source port")
    outside_client(t, sb)

    key = b"hostile:live"
    holders = h.owner_by_router(sb, key, b"real")
    t.eq(len(holders), 1, "test key stored on one node")
    node = holders[0] if holders else 1
    live_slot_attacks(t, sb, net, sender, key, node)
    late_reply(t, sb, key, node)

    # Still serving: a key on every node round-trips.
    c = sb.client()
    served = set()
    for i in range(200):
        k = b"after:%d" % i
        try:
            if c.request(b"set %s 0 0 2\r\nok\r\n" % k) == b"STORED\r\n" and \
                    c.request(b"get %s\r\n" % k) == b"VALUE %s 0 2\r\nok\r\nEND\r\n" % k:
                served.add(h.owner_by_router(sb, k, b"ok")[0])
        except h.Timeout:
            pass
        if len(served) == sb.nodes:
            break
    t.eq(len(served), sb.nodes, "router still serves every node after the attack")
    t.eq(c.strays, [], "no stray datagram at a regular client")
    c.close()
    sender.close()
    victim.close()
    h.check_identity(t, sb)
    if sb.xdp:
        ds = steer_delta(steer_start, sb.steer())
        h.log("steer counters moved during the test: %r" % ds)
        t.eq(ds.get("xsk_missing", 0), 0, "every steered frame found the router's AF_XDP socket")
    t.ok(sb.router_alive(), "router still running")
    sb.stop_router()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
