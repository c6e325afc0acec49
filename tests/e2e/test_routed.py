#!/usr/bin/env python3
"""e2e: nodes behind a gateway (sandbox `up --routed`).

The router's segment 198.18.0.0/24 holds the router, a client and a gateway namespace that
forwards to the nodes' subnet 198.18.2.0/24 and to a remote clients' subnet 198.18.3.0/24
(IP forwarding on in the gateway only). The config routes 198.18.2.0/24 via the gateway.

Passes when: every node resolves through the gateway (`via` the gateway, the gateway's MAC
as next hop, one ARP for all of them); keys set through the router from the segment's client
and from the remote client (behind the gateway too: its replies go back through the MAC the
request came from) land on the node `ringway-plan assign` names and read back; memcaslap
from the remote client verifies 100% with no drops; the route commands refuse a node with no
route and a removal that would strand the nodes, and re-adding the route moves nothing;
the accounting identity holds and the router drops nothing of its own.
"""
import os
import re
import subprocess
import sys

import control_util as cu
import harness as h
from clients import mcudp

SECONDS = int(os.environ.get("E2E_MEMCASLAP_SECONDS", "6"))
CONC = 8


def memcaslap(ns, server, cnf):
    args = ["ip", "netns", "exec", ns, "memcaslap", "-s", server, "-U", "-F", cnf,
            "-t", "%ds" % SECONDS, "-T", "1", "-c", str(CONC), "-v", "1.0", "-w", "4k"]
    h.log("$ " + " ".join(args))
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=SECONDS + 60)
    out = r.stdout.decode(errors="replace")
    h.log(out)
    res = {"rc": r.returncode}
    for k in ("cmd_get", "cmd_set", "verify_failed", "packet_drop", "udp_timeout"):
        m = re.search(r"^%s: (\d+)" % k, out, re.M)
        res[k] = int(m.group(1)) if m else None
    return res


def check_nodes_via_gateway(t, sb):
    nodes = h.nodes_list(sb.nodes_view())
    gw, gw_mac = sb.env["GW_IP"], sb.env["GW_MAC"].lower()
    t.eq(len(nodes), sb.nodes, "every node has a neighbour entry")
    for n in nodes:
        t.eq(n.get("via"), gw, "%s is reached via the gateway" % n.get("name"))
        t.eq(str(n.get("mac")).lower(), gw_mac, "%s's next hop MAC is the gateway's"
             % n.get("name"))
    if not sb.xdp:
        t.eq(sum(n.get("arp_sent", 0) for n in nodes), 1,
             "one ARP request for the gateway serves every node behind it")
        return
    # AF_XDP: the kernel resolves the next hops; it was asked for the gateway, not a node.
    neigh = subprocess.run(["ip", "-n", sb.env["NS_ROUTER"], "neigh", "show"],
                           stdout=subprocess.PIPE, check=True).stdout.decode()
    h.log(neigh)
    t.ok(re.search(r"^%s .*lladdr %s" % (re.escape(gw), gw_mac), neigh, re.M) is not None,
         "the kernel's neighbour table holds the gateway")
    t.ok(not any(ip in neigh.split() for ip in sb.node_ips),
         "the kernel was never asked for a node behind the gateway")


def check_placement(t, sb, plan, client_ns, tag):
    keys = [b"%s:%d" % (tag, i) for i in range(200)]
    want = h.plan_assign(plan, os.path.join(sb.state, "nodes"), "ring", keys)
    c = mcudp.UdpClient(sb.router, ns=client_ns, timeout=2.0)
    bad = 0
    try:
        for k in keys:
            if c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(k), k)) != b"STORED\r\n":
                bad += 1
            elif c.request(b"get %s\r\n" % k) != b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(k), k):
                bad += 1
    finally:
        c.close()
    t.eq(bad, 0, "%s: 200 keys stored and read back through the router" % tag)
    wrong = 0
    for i in range(1, sb.nodes + 1):
        tc = sb.node_tcp(i)
        for k in keys:
            held = tc.get(k) is not None
            if held != (want[k] == "node%d" % i):
                wrong += 1
        tc.close()
    t.eq(wrong, 0, "%s: every key on the node ringway-plan assign names, and only there"
         % tag)


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e routed (%s)" % h.PORT)
    sb = h.Sandbox("rt", nodes=3, routed=True)
    ctl = cu.Ctl(sb)
    sb.start_router(ringway, sb.config())
    t.ok(sb.wait_serving(), "router serves every node behind the gateway")
    check_nodes_via_gateway(t, sb)
    rc, out, _ = ctl.run("list")
    t.ok(rc == 0 and out.count("via %s" % sb.env["GW_IP"]) == sb.nodes,
         "ringwayctl list shows every node via the gateway")

    before = h.settled_stats(sb)
    check_placement(t, sb, plan, sb.client_ns, b"seg")
    check_placement(t, sb, plan, sb.env["NS_RCLIENT"], b"remote")
    cnf = os.path.join(sb.state, "memcaslap.cnf")
    with open(cnf, "w") as f:
        f.write(cu.MEMCASLAP_CNF)
    r = memcaslap(sb.env["NS_RCLIENT"], "%s:%d" % sb.router, cnf)
    t.eq(r["rc"], 0, "memcaslap from behind the gateway exits 0")
    t.ok((r["cmd_get"] or 0) + (r["cmd_set"] or 0) > 1000, "memcaslap did work")
    t.eq(r["verify_failed"], 0, "memcaslap: zero verify failures")
    t.eq(r["udp_timeout"], 0, "memcaslap: zero UDP timeouts")
    t.eq(r["packet_drop"], 0, "memcaslap: zero packet drops")
    after = h.check_identity(t, sb)
    d = h.delta(before, after)
    t.eq(h.own_drops(d["drops"]), {}, "no packet dropped by the router")
    t.ok(d["forwarded"] >= 800 and d["returned"] >= 800,
         "forwarded %d, returned %d" % (d["forwarded"], d["returned"]))

    # Route commands on the live router.
    rc, out, err = ctl.run("add", "n9", "198.18.5.9:11211")
    t.ok(rc != 0 and "no route to 198.18.5.9" in out + err, "add of a node with no route is "
         "refused: %s" % (out + err).strip())
    rc, out, err = ctl.run("route", "remove", sb.env["NODE_PREFIX"])
    t.ok(rc != 0 and "would leave node node1" in out + err,
         "removing the nodes' only route is refused: %s" % (out + err).strip())
    rc, out, err = ctl.run("route", "add", sb.env["NODE_PREFIX"], "via", sb.env["GW_IP"])
    t.ok(rc == 0 and "replaced" in out, "route add over the same route: %s" % out.strip())
    rc, out, _ = ctl.run("route", "list")
    t.ok(rc == 0 and "%s via %s" % (sb.env["NODE_PREFIX"], sb.env["GW_IP"]) in out,
         "route list: %s" % out.strip().replace("\n", " | "))
    check_placement(t, sb, plan, sb.env["NS_RCLIENT"], b"after")
    h.check_identity(t, sb)
    log = sb.stop_router()
    t.ok(re.search(r"^identity ok", log, re.M) is not None, "identity ok at exit")
    t.ok("routes changed (2 routes): 0 node(s) moved" in log,
         "the unchanged route moved no node (router log)")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
