#!/usr/bin/env python3
"""e2e: IPv6 end to end (sandbox `up --ipv6`, 2001:2::/48).

One flat sandbox (3 nodes), the router restarted per fleet (the state file removed between
runs, so each config's members are the ones served):
  1. IPv4 fleet (`config`): 150 keys stored through the router from the IPv4 client; their
     owners noted on the nodes.
  2. The same member names at their IPv6 addresses (`config --ipv6`): every key of step 1
     reads back through the router's IPv6 address from the IPv6 client, and each one's owner
     (asked directly over IPv6) is the node of the same name: moving the fleet to IPv6 moved
     no key. Then, from the IPv6 client: ASCII, meta and binary set/get land on the node
     `ringway-plan assign` names (checked on that node) and the bytes come back; a burst of
     1,000 verified requests (memcaslap cannot test this: its UDP mode resolves servers as
     IPv4 only, `getaddrinfo(AF_INET)`, so our own client runs it); the client's kernel
     resolved the router by ND (its neighbour entry for 2001:2::1 is the router's MAC); the
     router resolved every node by NS (their MACs known, and in af_packet mode each node's
     kernel learnt the router from the solicitation); ping6 of the router is answered (by
     ringway in af_packet mode, where the router namespace's kernel has IPv6 off); the
     packet accounting identity holds and the router drops nothing of its own.
  3. Mixed fleets: IPv6 client -> IPv4 nodes (`--ipv6-clients`) and IPv4 client -> IPv6 nodes
     (`--ipv6-nodes`), each key on its planned node, value back.
  4. An IPv6-only router (`--ipv6-only`: no `address` in the config): IPv6 client -> IPv6
     nodes, each key on its planned node; an IPv4 request gets no answer (af_packet: dropped
     by reason, not_ipv4 or the client's ARP as bad_arp); `ringwayctl add` of an IPv4 node
     is refused; identity.
Then a routed sandbox (`up --routed --ipv6`): the nodes 2001:2:2::/64 behind the gateway
2001:2::fe, reached via it (its MAC as next hop), keys placed as planned from the segment's
IPv6 client and the remote one 2001:2:3::100 (replies back through the MAC the request came
from), identity. Then two ports and a VLAN over IPv6 (keys placed, identity; on AF_XDP the kernel
resolves the nodes by ND on veth1, or on the VLAN's interface).

Environment: RINGWAY, RINGWAY_PLAN, RINGWAY_E2E_PORT.
"""
import os
import re
import subprocess
import sys
import time

import harness as h
from control_util import Ctl
from mcudp import UdpClient, Timeout, bin_request, bin_responses, bin_set

ALGO = "ring"


def restart(sb, ringway, family, extra=""):
    """The router on `family`'s config, with no membership left from an earlier run."""
    if sb.router_running:
        sb.stop_router()
    for f in ("state", "state.tmp"):
        try:
            os.unlink(os.path.join(sb.state, f))
        except FileNotFoundError:
            pass
    sb.start_router(ringway, sb.config(algo=ALGO, family=family, extra=extra))


def wait_serving(sb, client, timeout=10.0):
    """Until every node's MAC (or its next hop's) is known and a get comes back through
    `client`; True when it does."""
    end = time.monotonic() + timeout
    i = 0
    while time.monotonic() < end:
        i += 1
        try:
            client.request(b"get warmup:%d\r\n" % i, timeout=0.3)
        except (Timeout, ConnectionRefusedError):
            time.sleep(0.1)
            continue
        try:
            known = h.nodes_mac_known(sb.nodes_view())
        except (OSError, ValueError):
            known = None
        if known is not None and known >= sb.nodes and i > 2 * sb.nodes:
            return True
    return False


def holders(sb, key, v6):
    """1-based indexes of the nodes that hold `key` (asked directly, over IPv6 or IPv4)."""
    out = []
    for i in range(1, sb.nodes + 1):
        t = sb.node_tcp6(i) if v6 else sb.node_tcp(i)
        try:
            if t.get(key) is not None:
                out.append(i)
        finally:
            t.close()
    return out


def store_and_place(t, sb, plan, c, keys, nodes_v6, what):
    """Set every key through client `c`, read it back, and check it sits on the node
    ringway-plan names (and nowhere else). Returns {key: node index}."""
    want = h.plan_assign(plan, os.path.join(sb.state, "nodes"), ALGO, keys)
    bad = 0
    for k in keys:
        try:
            ok = c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(k), k)) == b"STORED\r\n" and \
                c.request(b"get %s\r\n" % k) == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(k), k)
        except Timeout:
            ok = False
        bad += not ok
    t.eq(bad, 0, "%s: %d keys stored and read back through the router" % (what, len(keys)))
    owners, wrong = {}, 0
    for i in range(1, sb.nodes + 1):
        tc = sb.node_tcp6(i) if nodes_v6 else sb.node_tcp(i)
        held = tc.get_many(keys)
        tc.close()
        for k in keys:
            if (k in held) != (want[k] == "node%d" % i):
                wrong += 1
            if k in held:
                owners[k] = i
    t.eq(wrong, 0, "%s: every key on the node ringway-plan assign names, and only there" % what)
    return owners


def protocols(t, sb, plan):
    """ASCII, meta and binary from the IPv6 client; which node holds each key is checked."""
    c = sb.client6()
    keys = [b"v6proto:ascii", b"v6proto:meta", b"v6proto:binary"]
    want = h.plan_assign(plan, os.path.join(sb.state, "nodes"), ALGO, keys)
    try:
        t.eq(c.request(b"set v6proto:ascii 3 0 5\r\nhello\r\n"), b"STORED\r\n", "ascii set")
        t.eq(c.request(b"get v6proto:ascii\r\n"), b"VALUE v6proto:ascii 3 5\r\nhello\r\nEND\r\n",
             "ascii get: bytes back over IPv6")
        t.eq(c.request(b"ms v6proto:meta 4 F7\r\nmeta\r\n"), b"HD\r\n", "meta ms")
        t.eq(c.request(b"mg v6proto:meta v f\r\n"), b"VA 4 f7\r\nmeta\r\n",
             "meta mg: bytes back over IPv6")
        r = bin_responses(c.request(bin_set(b"v6proto:binary", b"binval", 9, opaque=0x61)))
        t.ok(len(r) == 1 and r[0]["status"] == 0 and r[0]["opaque"] == 0x61, "binary set")
        r = bin_responses(c.request(bin_request("getk", b"v6proto:binary", opaque=0x62)))
        t.ok(len(r) == 1 and r[0]["status"] == 0 and r[0]["key"] == b"v6proto:binary" and
             r[0]["value"] == b"binval" and r[0]["extras"] == b"\0\0\0\x09",
             "binary getk: bytes back over IPv6")
    except Timeout as e:
        t.ok(False, "protocols over IPv6: %s" % e)
    finally:
        c.close()
    for k in keys:
        t.eq(["node%d" % i for i in holders(sb, k, True)], [want[k]],
             "%s is on the planned node (checked on the node)" % k.decode())


def burst(t, c, n=1000, window=32):
    """n requests (n/2 sets, then their gets) with up to `window` in flight, each reply
    verified."""
    keys = [b"v6burst:%d" % i for i in range(n // 2)]
    done = bad = 0
    for phase in ("set", "get"):
        for j in range(0, len(keys), window):
            inflight = []
            for k in keys[j:j + window]:
                if phase == "set":
                    req, exp = b"set %s 0 0 %d\r\n%s\r\n" % (k, len(k), k), b"STORED\r\n"
                else:
                    req = b"get %s\r\n" % k
                    exp = b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(k), k)
                inflight.append((c.send(req), exp))
            for rid, exp in inflight:
                try:
                    bad += c.collect(rid) != exp
                    done += 1
                except Timeout:
                    bad += 1
    t.eq((done, bad), (2 * len(keys), 0),
         "burst of %d verified requests over IPv6, %d in flight" % (2 * len(keys), window))


def neighbours(t, sb):
    env = sb.env
    out = subprocess.run(["ip", "-n", sb.client_ns, "-6", "neigh", "show", env["ROUTER_IP6"]],
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    t.ok(env["ROUTER_MAC"].lower() in out.lower(), "the client's kernel resolved the router by "
         "ND: %s" % out.strip())
    nodes = h.nodes_list(sb.nodes_view())
    for i, n in enumerate(nodes, 1):
        t.eq(str(n.get("mac")).lower(), env["NODE%d_MAC" % i].lower(),
             "%s's MAC resolved over IPv6" % n.get("name"))
    if sb.xdp:
        # AF_XDP: the kernel owns ND; its table holds the nodes' IPv6 addresses.
        neigh = subprocess.run(["ip", "-n", env["NS_ROUTER"], "-6", "neigh", "show"],
                               stdout=subprocess.PIPE, check=True).stdout.decode()
        t.ok(all(ip in neigh.split() for ip in sb.node_ips6),
             "the router namespace's kernel resolved every node by ND")
        return
    for i in range(1, sb.nodes + 1):
        neigh = subprocess.run(["ip", "-n", env["NODE%d_NS" % i], "-6", "neigh", "show",
                                env["ROUTER_IP6"]], stdout=subprocess.PIPE,
                               check=True).stdout.decode()
        t.ok(env["ROUTER_MAC"].lower() in neigh.lower(),
             "node%d learnt the router from ringway's solicitation: %s" % (i, neigh.strip()))
    r = subprocess.run(["ip", "-n", env["NS_ROUTER"], "-6", "addr", "show", "dev",
                        env["ROUTER_IF"]], stdout=subprocess.PIPE, check=True).stdout.decode()
    t.ok("inet6" not in r, "af_packet: the router namespace's kernel holds no IPv6 address")


def ping6(t, sb, ns, dst):
    before = sb.stats()
    r = subprocess.run(["ip", "netns", "exec", ns, "ping", "-6", "-c", "3", "-i", "0.2", "-W",
                        "1", dst], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    t.eq(r.returncode, 0, "ping6 %s answered: %s" % (dst, r.stdout.decode().strip()
                                                      .splitlines()[-1:]))
    if not sb.xdp:
        d = h.delta(before, h.settled_stats(sb))
        t.ok(d["answered"] >= 3, "af_packet: ringway answered the echo requests (answered +%d)"
             % d["answered"])


def v6_only(t, sb, ringway, plan):
    """Phase 4: the router with no IPv4 address at all."""
    restart(sb, ringway, "ipv6-only")
    with open(os.path.join(sb.state, "ringway.conf")) as f:
        router = f.read().split("[router]", 1)[1].split("\n[", 1)[0]
    t.ok(re.search(r"^(node_)?address\s*=", router, re.M) is None and
         re.search(r"^address6 = ", router, re.M) is not None,
         "IPv6-only config: [router] has address6 and no IPv4 address")
    c6 = sb.client6()
    if not t.ok(wait_serving(sb, c6), "IPv6-only router: serves every node over IPv6"):
        c6.close()
        return
    before = h.settled_stats(sb)
    store_and_place(t, sb, plan, c6, [b"v6only:%d" % i for i in range(100)], True,
                    "IPv6-only router")
    t.eq(c6.strays, [], "IPv6-only router: no stray datagram at the IPv6 client")
    c6.close()
    c4 = sb.client(timeout=0.5)
    got = None
    try:
        got = c4.request(b"get v6only:1\r\n")
    except (Timeout, OSError):
        pass
    c4.close()
    t.eq(got, None, "IPv6-only router: an IPv4 request gets no answer")
    rc, out, err = Ctl(sb).run("add", "node9", "198.18.1.9:11211")
    t.ok(rc != 0 and "no IPv4 address" in out + err,
         "IPv6-only router: a live add of an IPv4 node is refused: %s" % (out + err).strip())
    d = h.delta(before, h.check_identity(t, sb))
    if sb.xdp:
        return  # the kernel holds the IPv4 address on the veth: IPv4 is its, not ringway's
    v4 = d["drops"].get("not_ipv4", 0) + d["drops"].get("bad_arp", 0)
    t.ok(v4 >= 1, "af_packet: the IPv4 request (or the client's ARP) dropped by reason: %s"
         % d["drops"])
    t.eq({k: v for k, v in h.own_drops(d["drops"]).items() if k not in ("not_ipv4", "bad_arp")},
         {}, "IPv6-only router: nothing else dropped")


def flat(t, ringway, plan):
    sb = h.Sandbox("v6", nodes=3, ipv6=True)
    # 1. the IPv4 fleet
    restart(sb, ringway, None)
    if not t.ok(sb.wait_serving(), "IPv4 fleet: router serves every node"):
        return  # no point waiting for timeouts (the sandbox goes down at exit)
    keys = [b"move:%d" % i for i in range(150)]
    c4 = sb.client()
    v4_owner = store_and_place(t, sb, plan, c4, keys, False, "IPv4 fleet")
    c4.close()

    # 2. the same names at IPv6 addresses
    restart(sb, ringway, "ipv6")
    c6 = sb.client6()
    if not t.ok(wait_serving(sb, c6), "IPv6 fleet: router serves every node over IPv6"):
        return
    before = h.settled_stats(sb)
    missing = moved = 0
    for k in keys:
        try:
            got = c6.request(b"get %s\r\n" % k)
        except Timeout:
            got = None
        missing += got != b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(k), k)
    t.eq(missing, 0, "IPv4 -> IPv6: all %d keys stored over IPv4 read back over IPv6" % len(keys))
    for i in range(1, sb.nodes + 1):
        tc = sb.node_tcp6(i)
        held = tc.get_many(keys)
        tc.close()
        moved += sum(1 for k in held if v4_owner.get(k) != i)
    t.eq(moved, 0, "IPv4 -> IPv6: every key is on the node of the same name (no key moved)")
    store_and_place(t, sb, plan, c6, [b"v6:%d" % i for i in range(150)], True, "IPv6 fleet")
    protocols(t, sb, plan)
    burst(t, c6)
    t.eq(c6.strays, [], "no stray datagram at the IPv6 client")
    c6.close()
    neighbours(t, sb)
    ping6(t, sb, sb.client_ns, sb.env["ROUTER_IP6"])
    after = h.check_identity(t, sb)
    d = h.delta(before, after)
    t.eq(h.own_drops(d["drops"]), {}, "IPv6 fleet: no packet dropped by the router")

    # 3. mixed fleets
    restart(sb, ringway, "ipv6-clients")
    c6 = sb.client6()
    if not t.ok(wait_serving(sb, c6), "IPv6 client -> IPv4 nodes: serving"):
        return
    store_and_place(t, sb, plan, c6, [b"mix64:%d" % i for i in range(60)], False,
                    "IPv6 client -> IPv4 nodes")
    c6.close()
    h.check_identity(t, sb)
    restart(sb, ringway, "ipv6-nodes")
    c4 = sb.client()
    if not t.ok(wait_serving(sb, c4), "IPv4 client -> IPv6 nodes: serving"):
        return
    store_and_place(t, sb, plan, c4, [b"mix46:%d" % i for i in range(60)], True,
                    "IPv4 client -> IPv6 nodes")
    c4.close()
    h.check_identity(t, sb)

    # 4. an IPv6-only router
    v6_only(t, sb, ringway, plan)
    log = sb.stop_router()
    t.ok(re.search(r"^identity ok", log, re.M) is not None, "identity ok at exit")
    sb.down()


def routed(t, ringway, plan):
    sb = h.Sandbox("v6r", nodes=3, routed=True, ipv6=True)
    restart(sb, ringway, "ipv6")
    c6 = sb.client6()
    if not t.ok(wait_serving(sb, c6), "routed: router serves every node behind the IPv6 "
                "gateway"):
        return
    before = h.settled_stats(sb)
    gw, gw_mac = sb.env["GW_IP6"], sb.env["GW_MAC"].lower()
    for n in h.nodes_list(sb.nodes_view()):
        t.eq(n.get("via"), gw, "%s is reached via the IPv6 gateway" % n.get("name"))
        t.eq(str(n.get("mac")).lower(), gw_mac, "%s's next hop MAC is the gateway's"
             % n.get("name"))
    store_and_place(t, sb, plan, c6, [b"seg6:%d" % i for i in range(100)], True,
                    "routed, segment IPv6 client")
    c6.close()
    rc = UdpClient(sb.router6, ns=sb.env["NS_RCLIENT"], timeout=2.0)
    store_and_place(t, sb, plan, rc, [b"remote6:%d" % i for i in range(100)], True,
                    "routed, remote IPv6 client behind the gateway")
    t.eq(rc.strays, [], "no stray datagram at the remote client")
    rc.close()
    after = h.check_identity(t, sb)
    t.eq(h.own_drops(h.delta(before, after)["drops"]), {}, "routed: nothing dropped")
    sb.down()


def other_topologies(t, ringway, plan):
    """IPv6 on two ports (nodes on the router's second port, 2001:2:1::/64, node_address6
    2001:2:1::fe) and on a VLAN; on AF_XDP both ports run the steering program."""
    for kw, what in (({"two_ports": True}, "two ports"), ({"vlan": 7}, "VLAN 7")):
        sb = h.Sandbox("v6t" if "two_ports" in kw else "v6v", nodes=2, ipv6=True, **kw)
        restart(sb, ringway, "ipv6")
        c6 = sb.client6()
        if t.ok(wait_serving(sb, c6), "%s: router serves every node over IPv6" % what):
            before = h.settled_stats(sb)
            store_and_place(t, sb, plan, c6, [b"topo6:%d" % i for i in range(60)], True,
                            "%s, IPv6" % what)
            d = h.delta(before, h.check_identity(t, sb))
            t.eq(h.own_drops(d["drops"]), {}, "%s: nothing dropped" % what)
        c6.close()
        sb.down()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e ipv6 (%s)" % h.PORT)
    flat(t, ringway, plan)
    routed(t, ringway, plan)
    other_topologies(t, ringway, plan)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
