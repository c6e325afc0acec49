#!/usr/bin/env python3
"""e2e: IP-fragmented requests through the router to real memcached (issue 27, defect 11).

A client sends 4 KB sets over UDP with the IP DF bit off (IP_PMTUDISC_DONT), so its kernel
sends each as three fragments on the sandbox's 1500-byte veths. The router takes them whole
(af_packet: its kernel socket reassembles them, so the pool's mbufs and the PMD's frames are
raised to hold 8 KB; af_xdp: the fragments arrive as they are and the router reassembles
them), forwards them to the owner fragmented again for the MTU, and memcached's kernel
reassembles them. Checked: each value comes back byte for byte on get (memcached splits the
reply into 1400-byte datagrams itself); three such sets within a second, and thirty, leave
the node up with no timeouts and no failures, and everyone's other keys on it are served;
the router's fragment counters moved (af_packet: ip_fragments_sent; af_xdp: ip_reassembled
too) and the accounting identity holds. Then a 4 KB set through a router left at the
default 2 KB mbufs (af_packet) is dropped as ip_too_big, the node untouched.

Environment: RINGWAY.
"""
import socket
import sys
import time

import harness as h

IP_MTU_DISCOVER = getattr(socket, "IP_MTU_DISCOVER", 10)
IP_PMTUDISC_DONT = getattr(socket, "IP_PMTUDISC_DONT", 0)


def value_of(key, n):
    """n bytes derived from the key: no two keys share a value."""
    seed = sum(key) * 7
    return bytes(33 + (seed + i * 13) % 90 for i in range(n))


def with_tables(text, keys):
    """The config text with `keys` ("k = v" lines) in its [tables] section."""
    lines = "".join("%s\n" % k for k in keys)
    if "[tables]\n" in text:
        return text.replace("[tables]\n", "[tables]\n" + lines, 1)
    return text + "\n[tables]\n" + lines


def frag_client(sb):
    c = sb.client(timeout=3.0)
    c.sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)
    return c


def node_of(sb, name_or_index):
    for n in h.nodes_list(sb.nodes_view()):
        if n.get("name") == name_or_index:
            return n
    return None


def big_sets(t, sb, ringway):
    path = sb.config()
    with open(path) as f:
        text = f.read()
    if not sb.xdp:
        # af_packet: the kernel socket hands over reassembled datagrams up to its frame.
        text = with_tables(text, ["mbuf_bytes = 8192", "mbufs = 4096"])
    with open(path, "w") as f:
        f.write(text)
    sb.start_router(ringway, path, af_packet_args="framesz=8192,blocksz=8192,framecnt=1024")
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    before = h.settled_stats(sb)
    nodes_before = {n["name"]: n for n in h.nodes_list(sb.nodes_view())}
    c = frag_client(sb)
    keys = [b"frag:%d" % i for i in range(30)]
    stored = 0
    t0 = time.monotonic()
    for i, k in enumerate(keys):
        v = value_of(k, 4096)
        try:
            r = c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v))
        except h.Timeout as e:
            t.ok(False, "set %r (4 KB, fragmented): answered (%s)" % (k, e))
            continue
        stored += r == b"STORED\r\n"
        if i == 2:
            h.log("first three 4 KB sets within %.3f s" % (time.monotonic() - t0))
    t.eq(stored, len(keys), "every 4 KB set over fragmented UDP was STORED")
    whole = 0
    for k in keys:
        v = value_of(k, 4096)
        try:
            r = c.request(b"get %s\r\n" % k)
        except h.Timeout as e:
            t.ok(False, "get %r: answered (%s)" % (k, e))
            continue
        whole += r == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v)
    t.eq(whole, len(keys), "every value came back byte for byte on get")
    # Everyone's small keys on every node still served: no node went down.
    small_ok = 0
    for i in range(40):
        try:
            r = c.request(b"set small:%d 0 0 1\r\nx\r\n" % i)
        except h.Timeout:
            continue
        small_ok += r == b"STORED\r\n"
    t.eq(small_ok, 40, "small sets on every node served after the big ones (no node down)")
    c.close()
    after = h.check_identity(t, sb)
    dl = h.delta(before, after)
    t.ok(dl.get("ip_fragments_sent", 0) >= len(keys) * 2,
         "router sent the 4 KB sets to the nodes as fragments (ip_fragments_sent %d)"
         % dl.get("ip_fragments_sent", 0))
    if sb.xdp:
        t.ok(dl.get("ip_reassembled", 0) >= len(keys),
             "router reassembled the client's fragments (ip_reassembled %d)"
             % dl.get("ip_reassembled", 0))
    t.eq(h.own_drops(dl["drops"]), {}, "no drop of the fragmented requests")
    for n in h.nodes_list(sb.nodes_view()):
        b = nodes_before.get(n["name"], {})
        t.ok(n.get("timeouts", 0) == b.get("timeouts", 0) and
             n.get("failures", 0) == b.get("failures", 0) and
             n.get("downs", 0) == b.get("downs", 0),
             "%s: no timeout, failure or down from the big sets (health %s)"
             % (n["name"], n.get("health")))
    sb.stop_router()


def too_big_default(t, sb, ringway):
    """af_packet at the default 2 KB mbufs: the reassembled 4 KB datagram is cut at the
    socket's frame and dropped as ip_too_big, before a slot, the node untouched."""
    sb.start_router(ringway, sb.config())
    t.ok(sb.wait_serving(), "router (default mbufs) serves every node")
    before = h.settled_stats(sb)
    nodes_before = {n["name"]: n for n in h.nodes_list(sb.nodes_view())}
    c = frag_client(sb)
    lost = 0
    for i in range(3):
        k = b"toobig:%d" % i
        v = value_of(k, 4096)
        try:
            c.request(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v), timeout=0.5)
        except h.Timeout:
            lost += 1
    t.eq(lost, 3, "4 KB sets through a router with 2 KB frames get no answer")
    try:
        r = c.request(b"set small:x 0 0 1\r\nx\r\n")
    except h.Timeout:
        r = None
    t.eq(r, b"STORED\r\n", "a small set right after is served (no node down)")
    c.close()
    time.sleep(1.5)  # past request_ms: a slot taken would have timed out by now
    after = h.check_identity(t, sb)
    dl = h.delta(before, after)
    t.eq(dl["drops"].get("ip_too_big", 0), 3, "the three counted as ip_too_big")
    t.eq(dl.get("slots_expired", 0), 0, "no request slot timed out")
    for n in h.nodes_list(sb.nodes_view()):
        b = nodes_before.get(n["name"], {})
        t.eq(n.get("timeouts", 0) - b.get("timeouts", 0), 0,
             "%s: no timeout counted against it" % n["name"])
    sb.stop_router()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e fragments")
    sb = h.Sandbox("fr")
    try:
        big_sets(t, sb, ringway)
        if not sb.xdp:
            too_big_default(t, sb, ringway)
    finally:
        sb.down()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
