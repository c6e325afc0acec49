#!/usr/bin/env python3
"""e2e: a node's MAC cannot be hijacked by ARP (issue 12, item 4).

A host on the router's segment (here the client namespace, with raw AF_PACKET frames) claims
node 1's address: a gratuitous ARP request, a gratuitous ARP reply (both broadcast) and an
unsolicited ARP reply sent straight to the router, each with the attacker's MAC. The router
learns a node's MAC only from an ARP reply to its own outstanding request, so:
  - node 1's MAC in /ringway/nodes is unchanged and arp_mac_changed stays 0;
  - every frame is dropped as arp_unsolicited (and nothing else moves);
  - keys node 1 owns, set through the router afterwards, are on the real node 1;
  - the router's log has no "MAC changed" line.
Before the fix the first of those frames moved node 1's MAC to the attacker's, and node 1's
keys went to the attacker.

af_packet only: in AF_XDP mode the router namespace's kernel owns ARP (the steering program
passes ARP to it and ringway takes node MACs from the kernel's neighbour table), so ringway's
own ARP handling is not on the path; the test skips (77) there.

Environment: RINGWAY, RINGWAY_E2E_PORT.
"""
import struct
import sys
import time

import harness as h
from hostile import ETH_P_ARP, Sender, eth, ip_bytes, mac_bytes

BCAST = "ff:ff:ff:ff:ff:ff"


def arp(op, sha, sip, tha, tip):
    return struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + mac_bytes(sha) + ip_bytes(sip) + \
        mac_bytes(tha) + ip_bytes(tip)


def node_mac(sb, i):
    for n in h.nodes_list(sb.nodes_view()):
        if n.get("address", "").startswith(sb.node_ips[i - 1] + ":"):
            return (n.get("mac") or "").lower(), n.get("mac_known")
    return None, None


def keys_of_node(sb, node, want=5):
    """Keys the router places on `node` (found by storing them through it)."""
    keys = []
    for i in range(400):
        k = b"arp:%d" % i
        if h.owner_by_router(sb, k, b"probe") == [node]:
            keys.append(k)
            if len(keys) == want:
                break
    return keys


def main():
    h.need_root()
    if h.PORT == "af_xdp":
        h.log("SKIP: AF_XDP mode: the kernel owns ARP, ringway's ARP path is not used")
        return h.SKIP
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e hardening-arp")
    sb = h.Sandbox("ha")
    sb.start_router(ringway, sb.config())
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    env = sb.env
    node = 1
    nip = sb.node_ips[node - 1]
    real = env["NODE%d_MAC" % node].lower()
    mac, known = node_mac(sb, node)
    t.eq((mac, known), (real, 1), "node 1's MAC learned from its ARP reply")
    keys = keys_of_node(sb, node)
    t.eq(len(keys), 5, "five keys of node 1")

    # The attacker claims node 1's address with its own MAC (the client namespace's veth), so
    # that frames sent to it really arrive there (a made-up MAC would be flooded by the
    # bridge and might still reach node 1).
    attacker = env["CLIENT_MAC"]
    before = h.settled_stats(sb)
    sender = Sender("veth0", sb.client_ns)
    frames = [
        ("gratuitous request", eth(BCAST, attacker, ETH_P_ARP,
                                   arp(1, attacker, nip, "00:00:00:00:00:00", nip))),
        ("gratuitous reply", eth(BCAST, attacker, ETH_P_ARP,
                                 arp(2, attacker, nip, BCAST, nip))),
        ("unsolicited reply to the router",
         eth(env["ROUTER_MAC"], attacker, ETH_P_ARP,
             arp(2, attacker, nip, env["ROUTER_MAC"], env["ROUTER_IP"]))),
    ]
    for _ in range(3):
        for _name, f in frames:
            sender.send(f + b"\0" * max(0, 60 - len(f)))
            time.sleep(0.01)
    sender.close()
    time.sleep(0.3)
    after = h.settled_stats(sb)
    d = h.delta(before, after)
    t.eq(h.own_drops(d["drops"]), {"arp_unsolicited": 9},
         "each of the 9 frames dropped as arp_unsolicited, nothing else")
    t.eq(d.get("arp_learned", 0), 0, "no MAC learned from them")
    t.eq(after.get("arp_mac_changed", 0), 0, "arp_mac_changed is 0")
    mac, known = node_mac(sb, node)
    t.eq((mac, known), (real, 1), "node 1's MAC unchanged after the gratuitous ARP")

    # The node's keys still reach the real node.
    c = sb.client(timeout=0.5)
    stored = 0
    for k in keys:
        try:
            if c.request(b"set %s 0 0 5\r\nafter\r\n" % k) == b"STORED\r\n":
                stored += 1
        except h.Timeout:
            pass
    c.close()
    t.eq(stored, len(keys), "sets of node 1's keys answered STORED through the router")
    on_node = 0
    tc = sb.node_tcp(node)
    for k in keys:
        if tc.get(k) == b"after":
            on_node += 1
    tc.close()
    t.eq(on_node, len(keys), "node 1's keys reached the real node 1")
    h.check_identity(t, sb)
    t.ok(sb.router_alive(), "router still running")
    log = sb.stop_router()
    t.ok("MAC changed" not in log and "MAC changed" not in sb.router_log(),
         "no MAC change in the router's log")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
