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
the accounting identity holds and the router drops nothing of its own. Then a restart keeps
live routes: a route added live (the remote clients' subnet via the gateway) and a member
added behind it (a memcached in the remote client's namespace) are both back after the
router restarts from its state file (`route list` shows the route, `list` the member via the
gateway, the log says the state file's routes won over [route]), and keys placed on that
member are stored there through the router.
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


def memcaslap(ns, server, cnf, again=True):
    args = ["ip", "netns", "exec", ns, "memcaslap", "-s", server, "-U", "-F", cnf,
            "-t", "%ds" % SECONDS, "-T", "1", "-c", str(CONC), "-v", "1.0", "-w", "4k"]
    h.log("$ " + " ".join(args))
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=SECONDS + 60)
    out = r.stdout.decode(errors="replace")
    h.log(out)
    # memcaslap's own UDP bookkeeping sometimes aborts at once (ms_sort_udp_packet:
    # Assertion `req_id == ...`), straight at a memcached node too (test_memcaslap.py): a
    # client bug, not a reply. Once more then; the callers still check what the router
    # counted (every request answered, nothing dropped), which that abort does not touch.
    if again and "ms_sort_udp_packet: Assertion" in out:
        h.log("memcaslap aborted on its own assertion: once more")
        return memcaslap(ns, server, cnf, again=False)
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


def check_placement_on(t, sb, plan, nodes_file, nodes, tag):
    """Keys set through the router land where `ringway-plan assign` over nodes_file says;
    nodes: {name: (ip, port)}. Returns how many keys the plan gave each node."""
    keys = [b"%s:%d" % (tag, i) for i in range(300)]
    want = h.plan_assign(plan, nodes_file, "ring", keys)
    c = mcudp.UdpClient(sb.router, ns=sb.env["NS_RCLIENT"], timeout=2.0)
    bad = 0
    try:
        for k in keys:
            if c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(k), k)) != b"STORED\r\n":
                bad += 1
            elif c.request(b"get %s\r\n" % k) != b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(k), k):
                bad += 1
    finally:
        c.close()
    t.eq(bad, 0, "%s: 300 keys stored and read back through the router" % tag)
    wrong = 0
    for name, addr in nodes.items():
        tc = h.TcpClient(addr, ns=sb.client_ns)
        for k in keys:
            if (tc.get(k) is not None) != (want[k] == name):
                wrong += 1
        tc.close()
    t.eq(wrong, 0, "%s: every key on the node ringway-plan assign names, and only there" % tag)
    return {n: sum(1 for k in keys if want[k] == n) for n in nodes}


def check_restart_keeps_routes(t, sb, ctl, ringway, plan, conf):
    """A route added live and a member behind it survive a restart (the state file)."""
    gw, prefix = sb.env["GW_IP"], sb.env["RCLIENT_PREFIX"]
    port = int(sb.env["MC_PORT"])
    addr = (sb.env["RCLIENT_IP"], port)
    nodes_file = os.path.join(sb.state, "nodes-restart")
    with open(os.path.join(sb.state, "nodes")) as f:
        base = f.read()
    with open(nodes_file, "w") as f:
        f.write(base + "node9 %s:%d 1\n" % addr)
    nodes = {"node%d" % i: (sb.node_ips[i - 1], port) for i in range(1, sb.nodes + 1)}
    nodes["node9"] = addr
    mc = subprocess.Popen(["ip", "netns", "exec", sb.env["NS_RCLIENT"], "memcached", "-U",
                           str(port), "-p", str(port), "-l", addr[0], "-u", "root"])
    try:
        sb.start_router(ringway, conf)
        t.ok(sb.wait_serving(), "router serves again after the first restart")
        rc, out, err = ctl.run("add", "node9", "%s:%d" % addr)
        t.ok(rc != 0 and "no route to %s" % addr[0] in out + err,
             "node9 has no route before the live route: %s" % (out + err).strip())
        rc, out, err = ctl.run("route", "add", prefix, "via", gw)
        t.ok(rc == 0 and "added" in out, "live route add %s via %s: %s"
             % (prefix, gw, (out + err).strip()))
        rc, out, err = ctl.run("add", "node9", "%s:%d" % addr)
        t.ok(rc == 0 and "epoch" in out, "node9 added behind the live route: %s"
             % (out + err).strip())
        share = check_placement_on(t, sb, plan, nodes_file, nodes, b"live")
        t.ok(share["node9"] > 0, "node9 owns %d of 300 keys" % share["node9"])
        sb.stop_router()

        # The restart under test: the state file brings node9 and the route it needs.
        sb.start_router(ringway, conf)
        t.ok(sb.router_alive(), "the router restarts with node9 behind the live route")
        t.ok(sb.wait_serving(), "router serves after the restart")
        log = sb.router_log()
        t.ok("routes from the state file" in log and
             "only in the state file: %s via %s" % (prefix, gw) in log,
             "the log says the state file's routes win over [route], and which differs")
        rc, out, _ = ctl.run("route", "list")
        t.ok(rc == 0 and "%s via %s" % (prefix, gw) in out,
             "route list after the restart: %s" % out.strip().replace("\n", " | "))
        rc, out, _ = ctl.run("list")
        line = [ln for ln in out.splitlines() if "node9" in ln]
        t.ok(len(line) == 1 and "via %s" % gw in line[0],
             "node9 is a member via the gateway after the restart: %s" % line)
        check_placement_on(t, sb, plan, nodes_file, nodes, b"restarted")
        h.check_identity(t, sb)
        log = sb.stop_router()
        t.ok(re.search(r"^identity ok", log, re.M) is not None,
             "identity ok at exit after the restart")
    finally:
        mc.terminate()
        mc.wait(timeout=10)


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e routed (%s)" % h.PORT)
    sb = h.Sandbox("rt", nodes=3, routed=True)
    ctl = cu.Ctl(sb)
    conf = sb.config()
    sb.start_router(ringway, conf)
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
    check_restart_keeps_routes(t, sb, ctl, ringway, plan, conf)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
