#!/usr/bin/env python3
"""e2e: two ports (sandbox `up --two-ports`; [router] node_port = 1, node_address).

The client's segment 198.18.0.0/24 reaches the router's port 0 (veth0) only; the nodes sit
on another bridge with the router's port 1 (veth1, 198.18.1.254). The client cannot reach a
node directly: every request crosses the router, two workers with RSS on both ports.

Passes when: the nodes resolve from the node side (their kernels learned 198.18.1.254 at the
router's port-1 MAC); the client has no path to the nodes; keys set through the router land
on the node `ringway-plan assign` names and read back; memcaslap verifies 100% with no
drops; the accounting identity holds and the router drops nothing of its own.
AF_XDP (RINGWAY_E2E_PORT=af_xdp): both ports are net_af_xdp, each with its own steering
program (requests to the client port, replies to the node port), the router namespace's kernel
holds 198.18.1.254 on veth1 and resolves the nodes there; the counters of both programs show
requests steered on veth0 and replies on veth1 only, and both programs are gone at exit.
"""
import os
import re
import subprocess
import sys

import control_util as cu
import harness as h
import test_routed as tr
from mcudp import TcpClient, UdpClient


def check_placement(t, sb, plan, tag):
    keys = [b"%s:%d" % (tag, i) for i in range(200)]
    want = h.plan_assign(plan, os.path.join(sb.state, "nodes"), "ring", keys)
    c = UdpClient(sb.router, ns=sb.client_ns, timeout=2.0)
    bad = 0
    try:
        for k in keys:
            if c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(k), k)) != b"STORED\r\n":
                bad += 1
            elif c.request(b"get %s\r\n" % k) != b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(k), k):
                bad += 1
    finally:
        c.close()
    t.eq(bad, 0, "200 keys stored and read back through the router")
    wrong = 0
    for i in range(1, sb.nodes + 1):
        tc = TcpClient((sb.node_ips[i - 1], 11211), ns=sb.env["NODE%d_NS" % i])
        for k in keys:
            if (tc.get(k) is not None) != (want[k] == "node%d" % i):
                wrong += 1
        tc.close()
    t.eq(wrong, 0, "every key on the node ringway-plan assign names, and only there")


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e two ports")
    sb = h.Sandbox("tp", nodes=3, two_ports=True)
    sb.start_router(ringway, sb.config(), lcores="0@0,1@1,2@1", qpairs=2)
    t.ok(sb.wait_serving(), "router serves every node through its second port")
    t.ok(re.search(r"^ringway: nodes on port 1 \(%d queue pairs\), clients on port 0"
                   % sb.workers, sb.router_log(), re.M) is not None,
         "two ports, %d queue pair(s) on each" % sb.workers)
    if sb.xdp:
        t.ok(re.search(r"^ringway: AF_XDP: node MACs from the kernel's neighbour table of "
                       r"veth1$", sb.router_log(), re.M) is not None,
             "AF_XDP: node MACs from the node port's kernel (veth1)")
        progs = [xdp_prog(sb, ifn) for ifn in ("veth0", "veth1")]
        t.ok(all(p and "ringway_steer" in p for p in progs),
             "AF_XDP: ringway's program on both ports: %s" % progs)
        s0 = [sb.telemetry("/ringway/steer,%s" % ifn)["/ringway/steer"]
              for ifn in ("veth0", "veth1")]
    neigh = subprocess.run(["ip", "-n", sb.env["NODE1_NS"], "neigh", "show",
                            sb.env["NODE_SIDE_IP"]], stdout=subprocess.PIPE).stdout.decode()
    t.ok(sb.env["NODE_SIDE_MAC"].lower() in neigh.lower(),
         "node1 knows the router at its node-side address and port-1 MAC: %s" % neigh.strip())
    ping = subprocess.run(["ip", "netns", "exec", sb.client_ns, "ping", "-c", "1", "-W", "1",
                           sb.node_ips[0]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    t.ok(ping.returncode != 0, "the client has no path to the nodes but the router")
    before = h.settled_stats(sb)
    check_placement(t, sb, plan, b"tp")
    cnf = os.path.join(sb.state, "memcaslap.cnf")
    with open(cnf, "w") as f:
        f.write(cu.MEMCASLAP_CNF)
    r = tr.memcaslap(sb.client_ns, "%s:%d" % sb.router, cnf)
    t.eq(r["rc"], 0, "memcaslap across two ports exits 0")
    t.ok((r["cmd_get"] or 0) + (r["cmd_set"] or 0) > 1000, "memcaslap did work")
    t.eq(r["verify_failed"], 0, "memcaslap: zero verify failures")
    t.eq(r["udp_timeout"], 0, "memcaslap: zero UDP timeouts")
    t.eq(r["packet_drop"], 0, "memcaslap: zero packet drops")
    after = h.check_identity(t, sb)
    d = h.delta(before, after)
    t.eq(h.own_drops(d["drops"]), {}, "no packet dropped by the router")
    if sb.xdp:
        s1 = [sb.telemetry("/ringway/steer,%s" % ifn)["/ringway/steer"]
              for ifn in ("veth0", "veth1")]
        dc = [{k: s1[i][k] - s0[i][k] for k in s1[i]} for i in (0, 1)]
        t.ok(dc[0]["to_xsk_request"] > 1000 and dc[0]["to_xsk_reply"] == 0,
             "AF_XDP veth0 (clients): requests steered, no reply (%d, %d)"
             % (dc[0]["to_xsk_request"], dc[0]["to_xsk_reply"]))
        # Requests on veth1 are answers to the router's health probes (the probe port).
        t.ok(dc[1]["to_xsk_reply"] > 1000 and dc[1]["to_xsk_request"] * 20 < dc[1]["to_xsk_reply"],
             "AF_XDP veth1 (nodes): replies steered, at most a few probe answers (%d, %d)"
             % (dc[1]["to_xsk_reply"], dc[1]["to_xsk_request"]))
        t.eq(dc[0]["xsk_missing"] + dc[1]["xsk_missing"], 0, "AF_XDP: no xsk_missing")
    log = sb.stop_router()
    t.ok("identity ok" in log, "identity ok at exit")
    if sb.xdp:
        t.eq([xdp_prog(sb, ifn) for ifn in ("veth0", "veth1")], [None, None],
             "AF_XDP: no XDP program left on either port after exit")
    return t.finish()


def xdp_prog(sb, ifn):
    """'id N name NAME' of the XDP program on the router's interface ifn, or None."""
    out = subprocess.run(["ip", "-n", sb.env["NS_ROUTER"], "-d", "link", "show", "dev", ifn],
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    for line in out.splitlines():
        parts = line.split()
        if parts[:1] == ["prog/xdp"]:
            return " ".join(parts[1:5])
    return None


if __name__ == "__main__":
    sys.exit(main())
