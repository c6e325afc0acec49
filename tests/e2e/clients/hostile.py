#!/usr/bin/env python3
"""A hostile sender for the e2e tests: hand-made Ethernet frames on an AF_PACKET socket
(Python 3 stdlib only, root).

Frames are built field by field so that every length and checksum can lie on purpose.
`cases(...)` returns the catalogue of malformed or unwelcome frames a router must drop and
count: truncated Ethernet / IPv4 / UDP headers, lying IP and UDP length fields, IP
fragments, non-IPv4 and non-UDP traffic, UDP to ports the router does not serve, frames
without a memcached frame header, keys of 251 bytes, requests spanning two datagrams, forged
replies from an address that is no node, and clients outside the allowed prefixes;
`cases6(...)` the same over IPv6 (cut headers and extension headers, fragment headers, UDP
checksum 0, lying lengths, other ports and addresses, forged replies).

CLI (inside the client namespace):
  hostile.py --iface veth0 --dst-mac MAC --src-mac MAC --router 198.18.0.1 \\
             --client 198.18.0.10 [--case NAME]... [--list]
"""
import argparse
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nsutil import socket_in  # noqa: E402

ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806
ETH_P_IPV6 = 0x86DD
ETH_P_8021Q = 0x8100


def mac_bytes(m):
    return bytes(int(x, 16) for x in m.split(":"))


def ip_bytes(a):
    return socket.inet_aton(a)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(dst, src, ethertype, payload, vlan=None):
    hdr = mac_bytes(dst) + mac_bytes(src)
    if vlan is not None:
        hdr += struct.pack("!HH", ETH_P_8021Q, vlan)
    return hdr + struct.pack("!H", ethertype) + payload


def ipv4(src, dst, payload, proto=17, ident=0x4242, flags_frag=0x4000, ttl=64,
         options=b"", total_len=None, ihl=None, checksum=None, version=4):
    """An IPv4 packet. flags_frag: DF=0x4000, MF=0x2000, offset in 8-byte units."""
    if ihl is None:
        ihl = 5 + len(options) // 4
    if total_len is None:
        total_len = 20 + len(options) + len(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", (version << 4) | ihl, 0, total_len, ident, flags_frag,
                      ttl, proto, 0, ip_bytes(src), ip_bytes(dst)) + options
    if checksum is None:
        checksum = csum(hdr)
    hdr = hdr[:10] + struct.pack("!H", checksum) + hdr[12:]
    return hdr + payload


def udp(src, dst, sport, dport, payload, length=None, checksum=None):
    if length is None:
        length = 8 + len(payload)
    if checksum is None:
        pseudo = ip_bytes(src) + ip_bytes(dst) + struct.pack("!BBH", 0, 17, 8 + len(payload))
        checksum = csum(pseudo + struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) +
                        payload) or 0xFFFF
    return struct.pack("!HHHH", sport, dport, length, checksum) + payload


def mc_frame(req_id, payload, seq=0, total=1):
    return struct.pack("!HHHH", req_id, seq, total, 0) + payload


class Net:
    """Addresses of one sandbox, for building frames."""

    def __init__(self, router_mac, client_mac, router_ip, client_ip, node_ips,
                 outside_ip="198.18.0.200", port=11211, reply_base=32768):
        self.rmac, self.cmac = router_mac, client_mac
        self.rip, self.cip = router_ip, client_ip
        self.node_ips = list(node_ips)
        self.outside_ip = outside_ip
        self.port = port
        self.reply_base = reply_base

    def udp_frame(self, payload, src=None, dst=None, sport=40000, dport=None, **ipkw):
        src = src or self.cip
        dst = dst or self.rip
        dport = self.port if dport is None else dport
        return eth(self.rmac, self.cmac, ETH_P_IP,
                   ipv4(src, dst, udp(src, dst, sport, dport, payload), **ipkw))

    def get(self, key, req_id=7, **kw):
        return self.udp_frame(mc_frame(req_id, b"get " + key + b"\r\n"), **kw)


def cases(n, req_id=0x5151):
    """[(name, frame, expected reason family)] — the family names which kind of drop counter
    must move (the test maps families to the router's counter names)."""
    good = n.get(b"hostile:ok", req_id)
    good_ip = good[14:]
    good_udp = good_ip[20:]
    out = []
    # Ethernet shorter than its header; IPv4 and UDP cut inside their headers.
    # (The kernel pads an AF_PACKET frame shorter than 14 bytes to 14, and drops an 802.1Q
    # frame whose tag is cut before any tap sees it: a bare Ethernet header that announces
    # IPv4 is the shortest truncation that reaches the router as sent.)
    out.append(("eth_header_only", good[:14], "bad_ip"))
    out.append(("ip_truncated", eth(n.rmac, n.cmac, ETH_P_IP, good_ip[:12]), "bad_ip"))
    cut = ipv4(n.cip, n.rip, good_udp[:4], total_len=24)
    out.append(("udp_truncated", eth(n.rmac, n.cmac, ETH_P_IP, cut), "bad_udp"))
    # Length fields that lie.
    out.append(("ip_len_too_long", eth(n.rmac, n.cmac, ETH_P_IP,
                ipv4(n.cip, n.rip, good_udp, total_len=20 + len(good_udp) + 200)), "bad_ip"))
    out.append(("ip_len_too_short", eth(n.rmac, n.cmac, ETH_P_IP,
                ipv4(n.cip, n.rip, good_udp, total_len=22)), "short_ip_len"))
    out.append(("ip_ihl_too_small", eth(n.rmac, n.cmac, ETH_P_IP,
                ipv4(n.cip, n.rip, good_udp, ihl=4)), "bad_ip"))
    out.append(("ip_ihl_past_end", eth(n.rmac, n.cmac, ETH_P_IP,
                ipv4(n.cip, n.rip, b"", ihl=15, total_len=20)), "bad_ip"))
    out.append(("ip_version_6_in_v4", eth(n.rmac, n.cmac, ETH_P_IP,
                ipv4(n.cip, n.rip, good_udp, version=6)), "bad_ip"))
    inner = mc_frame(req_id, b"get hostile:ok\r\n")
    out.append(("udp_len_too_long", eth(n.rmac, n.cmac, ETH_P_IP, ipv4(n.cip, n.rip,
                udp(n.cip, n.rip, 40000, n.port, inner, length=8 + len(inner) + 100))),
                "bad_udp"))
    out.append(("udp_len_too_short", eth(n.rmac, n.cmac, ETH_P_IP, ipv4(n.cip, n.rip,
                udp(n.cip, n.rip, 40000, n.port, inner, length=6))), "bad_udp"))
    # Fragments: the first (MF) and a later one (offset).
    out.append(("ip_fragment_first", n.get(b"hostile:frag", req_id, flags_frag=0x2000),
                "fragment"))
    out.append(("ip_fragment_later", eth(n.rmac, n.cmac, ETH_P_IP,
                ipv4(n.cip, n.rip, b"tail of a datagram", flags_frag=0x0003, ident=0x4343)),
                "fragment"))
    # Not IPv4, not UDP, not a port the router serves, no memcached frame.
    out.append(("ethertype_ipv6", eth(n.rmac, n.cmac, ETH_P_IPV6, bytes(60)), "not_ipv4"))
    out.append(("ethertype_other", eth(n.rmac, n.cmac, 0x88B5, b"local experimental" * 3),
                "not_ipv4"))
    tcp = struct.pack("!HHIIBBHHH", 40000, n.port, 1, 0, 5 << 4, 0x02, 65535, 0, 0)
    out.append(("tcp_to_router", eth(n.rmac, n.cmac, ETH_P_IP,
                ipv4(n.cip, n.rip, tcp, proto=6)), "not_udp"))
    out.append(("udp_other_port", n.udp_frame(b"hello, anybody there?", dport=9999),
                "udp_port"))
    out.append(("udp_no_frame_header", n.udp_frame(b"get"), "bad_memcached"))
    out.append(("not_memcached_payload", n.udp_frame(mc_frame(req_id, b"\x16\x03\x01junk")),
                "bad_memcached"))
    out.append(("ip_not_for_router", n.get(b"hostile:ok", req_id, dst="198.18.0.99"),
                "not_for_us"))
    # memcached-level abuse: a key of 251 bytes, a request spanning two datagrams.
    out.append(("key_251", n.get(b"k" * 251, req_id), "key_too_long"))
    two = b"set hostile:multi 0 0 2000\r\n" + b"v" * 1300
    out.append(("multi_datagram_request", n.udp_frame(mc_frame(req_id, two, 0, 2)),
                "multi_datagram"))
    # A client outside the allowed prefixes (not an open reflector).
    out.append(("client_not_allowed", n.get(b"hostile:ok", req_id, src=n.outside_ip),
                "client_not_allowed"))
    # A forged reply from an address that is no node, to a port of the reply range.
    reply = mc_frame(1, b"VALUE hostile:ok 0 6\r\nforged\r\nEND\r\n")
    for i, port in enumerate((n.reply_base, n.reply_base + 1, n.reply_base + 77)):
        out.append(("forged_reply_non_node_%d" % i,
                    n.udp_frame(reply, src="198.18.1.250", sport=11211, dport=port),
                    "forged_reply"))
    return out


# ---- IPv6 (cases6: the hostile suite over IPv6)

IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_FRAGMENT, IPPROTO_DSTOPTS = 0, 43, 44, 60


def ip6_bytes(a):
    return socket.inet_pton(socket.AF_INET6, a)


def ext_chain(exts, last):
    """Extension headers [(type, bytes of options after the 2-byte header)] before `last`:
    (the first next-header value, the headers' bytes). Options are padded with PadN to a
    multiple of 8; a fragment header is given as (IPPROTO_FRAGMENT, 6 bytes)."""
    out = b""
    for i, (typ, body) in enumerate(exts):
        nxt = exts[i + 1][0] if i + 1 < len(exts) else last
        if typ == IPPROTO_FRAGMENT:
            out += struct.pack("!BB", nxt, 0) + body
            continue
        need = (-(2 + len(body))) % 8
        if need:
            body += b"\x00" if need == 1 else struct.pack("!BB", 1, need - 2) + bytes(need - 2)
        out += struct.pack("!BB", nxt, (2 + len(body)) // 8 - 1) + body
    return (exts[0][0] if exts else last), out


def fragment_hdr(offset=0, more=True, ident=0x4242):
    return (IPPROTO_FRAGMENT, struct.pack("!HI", (offset << 3) | int(more), ident))


def ipv6(src, dst, payload, next_hdr=17, exts=(), plen=None, hlim=64, version=6):
    """An IPv6 packet; `exts` go between the fixed header and `payload` (see ext_chain)."""
    first, ext = ext_chain(list(exts), next_hdr)
    if plen is None:
        plen = len(ext) + len(payload)
    return struct.pack("!IHBB", version << 28, plen, first, hlim) + ip6_bytes(src) + \
        ip6_bytes(dst) + ext + payload


def udp6(src, dst, sport, dport, payload, length=None, checksum=None):
    """UDP over IPv6; checksum None = computed (never 0: it is mandatory in IPv6)."""
    if length is None:
        length = 8 + len(payload)
    if checksum is None:
        pseudo = ip6_bytes(src) + ip6_bytes(dst) + struct.pack("!IxxxB", 8 + len(payload), 17)
        checksum = csum(pseudo + struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) +
                        payload) or 0xFFFF
    return struct.pack("!HHHH", sport, dport, length, checksum) + payload


class Net6:
    """IPv6 addresses of one sandbox (`up --ipv6`), for building frames."""

    def __init__(self, router_mac, client_mac, router_ip, client_ip, node_ips,
                 outside_ip="2001:2::200", port=11211, reply_base=32768):
        self.rmac, self.cmac = router_mac, client_mac
        self.rip, self.cip = router_ip, client_ip
        self.node_ips = list(node_ips)
        self.outside_ip = outside_ip
        self.port = port
        self.reply_base = reply_base

    def udp_frame(self, payload, src=None, dst=None, sport=40000, dport=None, exts=(),
                  udp_checksum=None, **ipkw):
        src = src or self.cip
        dst = dst or self.rip
        dport = self.port if dport is None else dport
        return eth(self.rmac, self.cmac, ETH_P_IPV6,
                   ipv6(src, dst, udp6(src, dst, sport, dport, payload, checksum=udp_checksum),
                        exts=exts, **ipkw))

    def get(self, key, req_id=7, **kw):
        return self.udp_frame(mc_frame(req_id, b"get " + key + b"\r\n"), **kw)


def cases6(n, req_id=0x5252):
    """The IPv6 catalogue, as cases(): [(name, frame, family)]."""
    good = n.get(b"hostile6:ok", req_id)
    inner = mc_frame(req_id, b"get hostile6:ok\r\n")
    u = udp6(n.cip, n.rip, 40000, n.port, inner)
    hbh = (IPPROTO_HOPOPTS, b"")
    out = []
    out.append(("ip6_header_cut", good[:14 + 30], "bad_ip6"))
    out.append(("ip6_payload_len_past_frame", eth(n.rmac, n.cmac, ETH_P_IPV6,
                ipv6(n.cip, n.rip, u, plen=len(u) + 100)), "bad_ip6"))
    out.append(("ip6_version_4", eth(n.rmac, n.cmac, ETH_P_IPV6,
                ipv6(n.cip, n.rip, u, version=4)), "bad_ip6"))
    # Extension headers cut short: a hop-by-hop header claiming 64 bytes in a payload of 8,
    # and one whose 8 bytes are all the frame holds.
    cut = struct.pack("!BB", 17, 7) + bytes(6)
    out.append(("ext_hdr_len_past_payload", eth(n.rmac, n.cmac, ETH_P_IPV6,
                ipv6(n.cip, n.rip, cut, next_hdr=IPPROTO_HOPOPTS, exts=())), "trunc_ext"))
    out.append(("ext_hdr_then_cut_udp", eth(n.rmac, n.cmac, ETH_P_IPV6,
                ipv6(n.cip, n.rip, u[:4], exts=[hbh])), "short_udp6"))
    # Fragments: a first fragment (M set) and a later one, right after IPv6 and after a
    # hop-by-hop header.
    out.append(("ip6_fragment_first", n.get(b"hostile6:frag", req_id,
                exts=[fragment_hdr(0, True)]), "fragment6_held"))
    out.append(("ip6_fragment_later", eth(n.rmac, n.cmac, ETH_P_IPV6,
                ipv6(n.cip, n.rip, b"tail of a datagram", exts=[fragment_hdr(3, False)])),
                "fragment6_held"))
    out.append(("ip6_fragment_after_hbh", n.get(b"hostile6:frag", req_id,
                exts=[hbh, fragment_hdr(0, True)]), "fragment6"))
    # UDP: checksum 0 (mandatory in IPv6), lying lengths.
    out.append(("udp6_zero_checksum", n.get(b"hostile6:ok", req_id, udp_checksum=0),
                "zero_csum"))
    out.append(("udp6_wrong_checksum", n.get(b"hostile6:ok", req_id, udp_checksum=0x1234),
                "bad_csum6"))
    out.append(("udp6_len_too_long", eth(n.rmac, n.cmac, ETH_P_IPV6, ipv6(n.cip, n.rip,
                udp6(n.cip, n.rip, 40000, n.port, inner, length=8 + len(inner) + 100))),
                "bad_udp6"))
    out.append(("udp6_len_too_short", eth(n.rmac, n.cmac, ETH_P_IPV6, ipv6(n.cip, n.rip,
                udp6(n.cip, n.rip, 40000, n.port, inner, length=6))), "bad_udp6"))
    # Not ours: another port, another address, a client outside the allowed prefixes.
    out.append(("udp6_other_port", n.udp_frame(b"hello, anybody there?", dport=9999),
                "udp_port6"))
    out.append(("ip6_not_for_router", n.get(b"hostile6:ok", req_id, dst="2001:2::99"),
                "not_for_us6"))
    out.append(("ip6_client_not_allowed", n.get(b"hostile6:ok", req_id, src=n.outside_ip),
                "client_not_allowed"))
    # Forged replies from an IPv6 address that is no node, to ports of the reply range.
    reply = mc_frame(1, b"VALUE hostile6:ok 0 6\r\nforged\r\nEND\r\n")
    for i, port in enumerate((n.reply_base, n.reply_base + 1, n.reply_base + 77)):
        out.append(("forged6_reply_non_node_%d" % i,
                    n.udp_frame(reply, src="2001:2::1:fa", sport=11211, dport=port),
                    "forged_reply"))
    return out


class Sender:
    """An AF_PACKET socket on `iface` in namespace `ns`."""

    def __init__(self, iface, ns=None):
        self.sock = socket_in(ns, socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.bind((iface, 0))

    def send(self, frame):
        # Ethernet minimum is padded by the veth driver for real NICs only; frames shorter
        # than 14 bytes are refused by the kernel, send them as they are when it allows.
        return self.sock.send(frame)

    def close(self):
        self.sock.close()


class Sniffer:
    """Capture IPv4/UDP frames on `iface` in namespace `ns` (to see what the router sends a
    node and what the node answers)."""

    def __init__(self, iface, ns=None):
        self.sock = socket_in(ns, socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.bind((iface, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.settimeout(0.05)

    def udp_frames(self, wait, until=None):
        """[(frame, src_ip, dst_ip, sport, dport, payload)] seen within `wait` seconds, or
        up to and including the first for which until(...) is true."""
        import time
        out = []
        end = time.monotonic() + wait
        while time.monotonic() < end:
            if until is not None and out and until(*out[-1]):
                break
            try:
                f = self.sock.recv(65536)
            except socket.timeout:
                continue
            if len(f) < 42 or struct.unpack_from("!H", f, 12)[0] != ETH_P_IP:
                continue
            ihl = (f[14] & 0xF) * 4
            if f[23] != 17:
                continue
            sport, dport, ulen = struct.unpack_from("!HHH", f, 14 + ihl)
            payload = f[14 + ihl + 8: 14 + ihl + ulen]
            out.append((f, socket.inet_ntoa(f[26:30]), socket.inet_ntoa(f[30:34]),
                        sport, dport, payload))
        return out

    def udp6_frames(self, wait, until=None):
        """As udp_frames, for UDP directly after an IPv6 header (addresses as text)."""
        import time
        out = []
        end = time.monotonic() + wait
        while time.monotonic() < end:
            if until is not None and out and until(*out[-1]):
                break
            try:
                f = self.sock.recv(65536)
            except socket.timeout:
                continue
            if len(f) < 62 or struct.unpack_from("!H", f, 12)[0] != ETH_P_IPV6 or f[20] != 17:
                continue
            sport, dport, ulen = struct.unpack_from("!HHH", f, 54)
            out.append((f, socket.inet_ntop(socket.AF_INET6, f[22:38]),
                        socket.inet_ntop(socket.AF_INET6, f[38:54]), sport, dport,
                        f[62:54 + ulen]))
        return out

    def close(self):
        self.sock.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iface", default="veth0")
    ap.add_argument("--dst-mac", required=True, help="the router's MAC")
    ap.add_argument("--src-mac", required=True, help="this interface's MAC")
    ap.add_argument("--router", default="198.18.0.1")
    ap.add_argument("--client", default="198.18.0.10")
    ap.add_argument("--case", action="append", help="send only these cases")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    n = Net(a.dst_mac, a.src_mac, a.router, a.client, [])
    cs = cases(n)
    if a.list:
        for name, f, fam in cs:
            print("%-28s %5d bytes  %s" % (name, len(f), fam))
        return 0
    s = Sender(a.iface)
    for name, f, fam in cs:
        if a.case and name not in a.case:
            continue
        s.send(f)
        print("sent %s (%d bytes, expect %s)" % (name, len(f), fam))
    return 0


if __name__ == "__main__":
    sys.exit(main())
