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
AF_PACKET only: with an AF_XDP port the kernel resolves the nodes, and ringway refuses a
VLAN there (checked at the end: the start fails with that reason).
"""
import os
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
    sb = h.Sandbox("vl", nodes=3, port="af_packet", vlan=VID)
    conf = sb.config()
    with open(conf) as f:
        t.ok("vlan = %d\n" % VID in f.read(), "the sandbox config puts the port on VLAN %d" % VID)
    sb.start_router(ringway, conf)
    t.ok(sb.wait_serving(), "router serves every node on VLAN %d (tagged ARP learned)" % VID)
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
    t.eq(d["drops"].get("wrong_vlan", 0), 5, "5 requests on VLAN 200 counted as wrong_vlan")
    t.eq(h.own_drops({k: v for k, v in d["drops"].items() if k != "wrong_vlan"}), {},
         "and nothing else dropped")
    log = sb.stop_router()
    t.ok("identity ok" in log, "identity ok at exit")

    # AF_XDP: refused with the reason, nothing left running.
    if h.PORT == "af_xdp" or os.environ.get("E2E_VLAN_XDP_REFUSAL", "1") == "1":
        env2 = dict(os.environ, SANDBOX_PORT="af_xdp")
        r = subprocess.run([h.SANDBOX, "router-start", "--prefix", sb.prefix, "--ringway",
                            ringway, "--config", conf], env=env2, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        out = r.stdout.decode(errors="replace")
        t.ok(r.returncode != 0 and "vlan 100 with an AF_XDP port" in out,
             "AF_XDP with a VLAN is refused at start with the reason")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
