#!/usr/bin/env python3
"""e2e: hostile input over IPv6 (sandbox `up --ipv6`, `config --ipv6`), as test_hostile.py
does for IPv4. Every frame of clients/hostile.py's cases6() is dropped and counted under its
reason, and nothing else moves (no forward, no reply):

  - IPv6 header cut, payload length past the frame, version 4 in an IPv6 ethertype;
  - extension headers cut short (a hop-by-hop header longer than the payload; UDP cut after
    a complete one);
  - fragment headers: right after the IPv6 header (first, later), held for reassembly and
    dropped as ip_fragment_timeout (one_held); after a hop-by-hop header, dropped;
  - UDP checksum 0 (mandatory in IPv6) or wrong, lying UDP lengths;
  - other ports, another address, a client outside the allowed prefixes;
  - forged replies from an IPv6 address that is no node;
  - at a LIVE request slot (its node frozen): forged replies from a non-node IPv6 address,
    from another node, and from the right node but a wrong source port: dropped as wrong
    source; the client then gets exactly the real reply.
A request behind hop-by-hop and destination-options headers is served (the data plane walks
them). Afterwards the router serves every node and the accounting identity holds.

AF_XDP mode: the families the steering program passes to the kernel (cut headers, fragments,
lying UDP lengths, other ports and addresses) must move exactly their steer counter and
never reach the router; the rest is steered (to_xsk_*) and checked against the router's
drop reasons as above.

Environment: RINGWAY, RINGWAY_E2E_PORT.
"""
import os
import signal
import socket
import sys
import time

import harness as h
import test_hostile as v4
from hostile import (IPPROTO_DSTOPTS, IPPROTO_HOPOPTS, Net6, Sender, Sniffer, cases6, mc_frame)

# The router's drop reasons per family (the IPv6 data plane counts IPv6 faults under the
# IPv4 reasons of the same kind).
FAMILY = {
    "bad_ip6": {"truncated_ip", "bad_ip"},
    "trunc_ext": {"truncated_ip"},
    "short_udp6": {"truncated_udp"},
    "fragment6": {"ip_fragment"},
    "zero_csum": {"udp_checksum_zero"},
    "bad_csum6": {"bad_udp_checksum"},
    "bad_udp6": {"truncated_udp", "bad_udp_length"},
    "udp_port6": {"bad_port"},
    "not_for_us6": {"not_our_ip"},
    "client_not_allowed": {"client_denied"},
    "forged_reply": {"reply_no_slot", "reply_wrong_source"},
}
WRONG_SOURCE = {"reply_wrong_source"}
# AF_XDP: what the steering program passes to the kernel, by family (lib/steer/steer_abi.h).
STEER_FAMILY = {
    "bad_ip6": {"pass_bad_ipv6"},
    "trunc_ext": {"pass_bad_ipv6"},
    "short_udp6": {"pass_bad_udp"},
    "fragment6": {"pass_fragment"},
    "bad_udp6": {"pass_bad_udp"},
    "udp_port6": {"pass_other_port"},
    "not_for_us6": {"pass_other_addr"},
}
# The kernels' own traffic that may cross the program during a case: ARP, Neighbor
# Solicitations to solicited-node groups and unicast ND.
v4.STEER_NOISE = {"pass_not_ipv4", "pass_other_addr", "pass_not_udp"}
REQUEST_S = v4.REQUEST_S


def catch_request6(sniffer, router_ip, node_ip, wait=1.0):
    """The router's forwarded request seen on the node's veth: (sport, req_id)."""
    def is_it(f, src, dst, sport, dport, payload):
        return src == router_ip and dst == node_ip and len(payload) >= 8

    for f, src, dst, sport, dport, payload in sniffer.udp6_frames(wait, until=is_it):
        if is_it(f, src, dst, sport, dport, payload):
            return sport, int.from_bytes(payload[:2], "big")
    return None


def live_slot_attacks(t, sb, net, sender, key, node):
    nip = sb.node_ips6[node - 1]
    other = sb.node_ips6[node % sb.nodes]
    sniffer = Sniffer("veth0", sb.env["NODE%d_NS" % node])
    pid = v4.node_pid(sb, node)
    c = sb.client6(timeout=3.0)
    h.freeze(pid)
    try:
        t0 = time.monotonic()
        rid = c.send(b"get %s\r\n" % key)
        seen = catch_request6(sniffer, sb.router6[0], nip)
        t.ok(seen is not None, "router's forwarded IPv6 request seen on node%d's veth" % node)
        if seen is None:
            return
        sport, fwd_id = seen
        forged = fwd_id.to_bytes(2, "big") + b"\0\0\0\1\0\0" + \
            b"VALUE %s 0 6\r\nforged\r\nEND\r\n" % key
        for src, src_port in (("2001:2::1:fa", 11211), (other, 11211), (nip, 11212)):
            frame = net.udp_frame(forged, src=src, sport=src_port, dport=sport)
            v4.one_drop(t, sb, "forged reply from [%s]:%d to the live slot (port %d, id %d)"
                        % (src, src_port, sport, fwd_id), lambda: sender.send(frame),
                        WRONG_SOURCE)
        t.ok(c.expect_silence(0.2), "no forged reply reached the client")
        t.ok(time.monotonic() - t0 < 0.8 * REQUEST_S, "attacks done while the slot lived "
             "(%.2f s of %.1f s)" % (time.monotonic() - t0, REQUEST_S))
    finally:
        os.kill(pid, signal.SIGCONT)
        sniffer.close()
    try:
        r = c.collect(rid)
    except h.Timeout:
        r = None
    t.eq(r, b"VALUE %s 0 4\r\nreal\r\nEND\r\n" % key, "client got the node's real reply")
    t.eq(c.strays, [], "no stray datagram at the attacked client")
    c.close()


def ext_headers_served(t, sb, net, sender, victim):
    """A get behind hop-by-hop and destination-options headers is answered."""
    before = sb.stats()
    frame = net.udp_frame(mc_frame(0x6161, b"get hostile6:ok\r\n"),
                          exts=[(IPPROTO_HOPOPTS, b""), (IPPROTO_DSTOPTS, bytes(10))])
    sender.send(frame)
    got = None
    end = time.monotonic() + 2.0
    while time.monotonic() < end and got is None:
        try:
            got = victim.recv(65536)
        except BlockingIOError:
            time.sleep(0.01)
    t.eq(got, mc_frame(0x6161, b"VALUE hostile6:ok 0 4\r\nreal\r\nEND\r\n"),
         "a get behind hop-by-hop + destination-options headers is answered")
    d = h.delta(before, h.settled_stats(sb, 1.0))
    t.eq(h.own_drops(d["drops"]), {}, "... and nothing dropped")


def outside_client(t, sb):
    c = sb.client6(timeout=0.5, bind=sb.env["OUTSIDER_IP6"])
    before = sb.stats()
    rid = c.send(b"get hostile6:ok\r\n")
    try:
        r = c.collect(rid)
    except h.Timeout:
        r = None
    d = h.delta(before, sb.stats())
    t.eq(r, None, "IPv6 client outside the allowed prefixes got no reply")
    t.eq(h.own_drops(d["drops"]), {"client_denied": 1}, "counted as client_denied")
    c.close()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e hostile over IPv6 (%s)" % h.PORT)
    sb = h.Sandbox("h6", nodes=3, ipv6=True)
    sb.start_router(ringway, sb.config(request_ms=int(REQUEST_S * 1000), family="ipv6"))
    env = sb.env
    c = sb.client6()
    served = set()
    for i in range(300):
        k = b"warm6:%d" % i
        try:
            if c.request(b"set %s 0 0 1\r\nw\r\n" % k, timeout=0.5) == b"STORED\r\n":
                served.add(k)
        except (h.Timeout, ConnectionRefusedError):
            time.sleep(0.05)
        if len(served) >= 30:
            break
    c.close()
    t.ok(len(served) >= 30, "router serves over IPv6 after start-up")
    net = Net6(env["ROUTER_MAC"], env["CLIENT_MAC"], env["ROUTER_IP6"], env["CLIENT_IP6"],
               sb.node_ips6, outside_ip=env["OUTSIDER_IP6"])
    sender = Sender("veth0", sb.client_ns)
    victim = h.socket_in(sb.client_ns, socket.AF_INET6, socket.SOCK_DGRAM)
    victim.bind((env["CLIENT_IP6"], 40000))
    victim.setblocking(False)

    key = b"hostile6:ok"
    c = sb.client6()
    t.eq(c.request(b"set %s 0 0 4\r\nreal\r\n" % key), b"STORED\r\n", "test key stored")
    c.close()
    steer_start = sb.steer() if sb.xdp else None
    for name, frame, family in cases6(net):
        if sb.xdp and family in STEER_FAMILY:
            v4.one_pass(t, sb, name, lambda f=frame: sender.send(f), STEER_FAMILY[family])
            continue
        if family == "fragment6_held":  # UDP fragments to the router: reassembled there
            v4.one_held(t, sb, name, lambda f=frame: sender.send(f))
            continue
        v4.one_drop(t, sb, name, lambda f=frame: sender.send(f), FAMILY[family])
    try:
        got = victim.recv(65536)
    except BlockingIOError:
        got = None
    t.eq(got, None, "nothing came back to the hostile frames' source port")
    ext_headers_served(t, sb, net, sender, victim)
    outside_client(t, sb)

    holders = [i for i in range(1, sb.nodes + 1) if _holds(sb, i, key)]
    t.eq(len(holders), 1, "test key on one node")
    live_slot_attacks(t, sb, net, sender, key, holders[0] if holders else 1)

    c = sb.client6()
    ok = 0
    for i in range(60):
        k = b"after6:%d" % i
        try:
            ok += c.request(b"set %s 0 0 2\r\nok\r\n" % k) == b"STORED\r\n" and \
                c.request(b"get %s\r\n" % k) == b"VALUE %s 0 2\r\nok\r\nEND\r\n" % k
        except h.Timeout:
            pass
    t.eq(ok, 60, "router still serves over IPv6 after the attack")
    t.eq(c.strays, [], "no stray datagram at a regular client")
    c.close()
    sender.close()
    victim.close()
    h.check_identity(t, sb)
    if sb.xdp:
        ds = v4.steer_delta(steer_start, sb.steer())
        h.log("steer counters moved during the test: %r" % ds)
        t.eq(ds.get("xsk_missing", 0), 0, "every steered frame found the router's AF_XDP socket")
    t.ok(sb.router_alive(), "router still running")
    sb.stop_router()
    return t.finish()


def _holds(sb, i, key):
    tc = sb.node_tcp6(i)
    try:
        return tc.get(key) is not None
    finally:
        tc.close()


if __name__ == "__main__":
    sys.exit(main())
