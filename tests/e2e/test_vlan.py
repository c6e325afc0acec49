#!/usr/bin/env python3
"""e2e: a router port on one VLAN ([router] vlan = 100; sandbox `up --vlan 100`).

The client's and the nodes' frames are tagged 100 on the wire (the sandbox tags them as a
switch's access port would), so the router sees VLAN-tagged clients and nodes, answers ARP
and ping on VLAN 100 and ARPs for the nodes there.

Passes when: every node's MAC is learned (tagged ARP both ways); keys set through the
router land on the node `ringway-plan assign` names and read back; memcaslap verifies 100%
with no drops; the client's ping of the router is answered; frames from the client tagged
with another VLAN are dropped as wrong_vlan, one count each, and nothing comes back; the
accounting identity holds and the router drops nothing else.
AF_XDP (RINGWAY_E2E_PORT=af_xdp): the steering program takes VLAN 100 only; the router
namespace's kernel holds the router address on VLAN 100 (veth0.100, or veth0 with the
sandbox's tagging program when the kernel has no 802.1Q) and answers ARP and ping there, and
ringway reads the nodes' MACs from that interface. Frames on VLAN 200 are not ringway's: the
program passes them to the kernel (pass_other_vlan, one count each), which has nothing on
VLAN 200; nothing comes back and the router's own counters do not move.
"""
import os
import re
import subprocess
import sys
import time

import control_util as cu
import harness as h
import test_routed as tr
from hostile import Sender, eth, ipv4, mc_frame, udp, ETH_P_IP

VID = 100


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e vlan")
    sb = h.Sandbox("vl", nodes=3, vlan=VID)
    conf = sb.config()
    with open(conf) as f:
        t.ok("vlan = %d\n" % VID in f.read(), "the sandbox config puts the port on VLAN %d" % VID)
    sb.start_router(ringway, conf)
    t.ok(sb.wait_serving(), "router serves every node on VLAN %d (tagged ARP learned)" % VID)
    if sb.xdp:
        t.ok(re.search(r"^ringway: AF_XDP: node MACs from the kernel's neighbour table of "
                       r"veth0(\.%d)?$" % VID, sb.router_log(), re.M) is not None,
             "AF_XDP: node MACs from the kernel's interface on VLAN %d" % VID)
    before = h.settled_stats(sb)
    tr.check_placement(t, sb, plan, sb.client_ns, b"vlan")
    cnf = os.path.join(sb.state, "memcaslap.cnf")
    with open(cnf, "w") as f:
        f.write(cu.MEMCASLAP_CNF)
    r = tr.memcaslap(sb.client_ns, "%s:%d" % sb.router, cnf)
    t.eq(r["rc"], 0, "memcaslap on VLAN %d exits 0" % VID)
    t.ok((r["cmd_get"] or 0) + (r["cmd_set"] or 0) > 1000, "memcaslap did work")
    t.eq(r["verify_failed"], 0, "memcaslap: zero verify failures")
    t.eq(r["udp_timeout"], 0, "memcaslap: zero UDP timeouts")
    ping = subprocess.run(["ip", "netns", "exec", sb.client_ns, "ping", "-c", "2", "-W", "1",
                           sb.router[0]], stdout=subprocess.PIPE)
    t.eq(ping.returncode, 0, "the router answers ping on VLAN %d" % VID)
    mid = h.check_identity(t, sb)
    d = h.delta(before, mid)
    t.eq(h.own_drops(d["drops"]), {}, "no packet dropped by the router")

    # Requests tagged with another VLAN: dropped, counted, never answered.
    env = sb.env
    victim = h.socket_in(sb.client_ns)
    victim.bind((env["CLIENT_IP"], 40001))
    victim.setblocking(False)
    sender = Sender("veth0", sb.client_ns)
    req = mc_frame(0x7777, b"get vlan:0\r\n")
    frame = eth(env["ROUTER_MAC"], env["CLIENT_MAC"], ETH_P_IP,
                ipv4(env["CLIENT_IP"], env["ROUTER_IP"],
                     udp(env["CLIENT_IP"], env["ROUTER_IP"], 40001, 11211, req)), vlan=200)
    steer_before = sb.steer() if sb.xdp else None
    for _ in range(5):
        sender.send(frame)
    sender.close()
    time.sleep(0.5)
    try:
        got = victim.recv(2048)
    except BlockingIOError:
        got = None
    victim.close()
    t.eq(got, None, "nothing came back to requests on VLAN 200")
    after = h.check_identity(t, sb)
    d = h.delta(mid, after)
    if sb.xdp:
        ds = sb.steer()
        t.eq(ds["pass_other_vlan"] - steer_before["pass_other_vlan"], 5,
             "AF_XDP: 5 requests on VLAN 200 passed to the kernel as pass_other_vlan")
        t.eq(h.own_drops(d["drops"]), {}, "and the router dropped nothing")
    else:
        t.eq(d["drops"].get("wrong_vlan", 0), 5, "5 requests on VLAN 200 counted as wrong_vlan")
        t.eq(h.own_drops({k: v for k, v in d["drops"].items() if k != "wrong_vlan"}), {},
             "and nothing else dropped")
    log = sb.stop_router()
    t.ok("identity ok" in log, "identity ok at exit")
    if sb.xdp:
        t.eq(sb.xdp_prog(), None, "AF_XDP: no XDP program left on veth0 after exit")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
