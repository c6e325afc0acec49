#!/usr/bin/env python3
"""A memcached client of our own for the e2e tests (Python 3 stdlib only).

UDP: every datagram carries memcached's 8-byte frame header (request id, sequence number,
total datagrams, reserved; network byte order). A request is one datagram; a reply may be
many (memcached splits replies into datagrams of at most 1400 payload bytes), reassembled
here by sequence number. Datagrams that answer no request this client is waiting for are
kept in `strays`, so a test can assert that no forged, stale or misdelivered reply ever
reached this client.

Payloads are raw bytes: ASCII (`get k\\r\\n`), meta (`mg k v\\r\\n`) and binary
(bin_request()) commands alike; helpers build and split them. TcpClient talks to a node
directly (large values, direct checks).

CLI (run inside a namespace with `ip netns exec`):
  mcudp.py --server 198.18.0.1:11211 [--bind IP] [--timeout S] [--binary] CMD...
  e.g. mcudp.py --server 198.18.0.1:11211 'set a 0 0 1' 'x'   (lines joined with \\r\\n)
"""
import argparse
import os
import random
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nsutil import socket_in  # noqa: E402

FRAME = struct.Struct("!HHHH")
BIN_HDR = struct.Struct("!BBHBBHIIQ")

# Binary protocol opcodes (memcached protocol_binary.h).
OP = {
    "get": 0x00, "set": 0x01, "add": 0x02, "replace": 0x03, "delete": 0x04,
    "incr": 0x05, "decr": 0x06, "quit": 0x07, "flush": 0x08, "getq": 0x09,
    "noop": 0x0A, "version": 0x0B, "getk": 0x0C, "getkq": 0x0D, "append": 0x0E,
    "prepend": 0x0F, "stat": 0x10, "setq": 0x11, "touch": 0x1C, "gat": 0x1D,
}


class Timeout(Exception):
    """No complete reply within the time allowed."""


def frame(req_id, payload, seq=0, total=1, reserved=0):
    return FRAME.pack(req_id & 0xFFFF, seq, total, reserved) + payload


def unframe(dgram):
    """(req_id, seq, total, reserved, payload), or None when shorter than the header."""
    if len(dgram) < FRAME.size:
        return None
    return FRAME.unpack_from(dgram) + (dgram[FRAME.size:],)


def bin_request(op, key=b"", extras=b"", value=b"", opaque=0, cas=0, vbucket=0):
    """A binary-protocol request packet; `op` is a name from OP or a number."""
    if isinstance(op, str):
        op = OP[op]
    body = len(extras) + len(key) + len(value)
    return BIN_HDR.pack(0x80, op, len(key), len(extras), 0, vbucket, body, opaque, cas) + \
        extras + key + value


def bin_set(key, value, flags=0, exptime=0, opaque=0, op="set"):
    return bin_request(op, key, struct.pack("!II", flags, exptime), value, opaque)


def bin_responses(data):
    """Split binary responses: list of dicts (magic, opcode, status, opaque, cas, extras, key,
    value). Raises ValueError on a truncated or non-response packet."""
    out = []
    off = 0
    while off < len(data):
        if len(data) - off < BIN_HDR.size:
            raise ValueError("truncated binary header at %d" % off)
        magic, op, klen, elen, dtype, status, blen, opaque, cas = BIN_HDR.unpack_from(data, off)
        if magic != 0x81:
            raise ValueError("not a binary response (magic 0x%02x)" % magic)
        body = data[off + BIN_HDR.size: off + BIN_HDR.size + blen]
        if len(body) != blen:
            raise ValueError("truncated binary body")
        out.append({"magic": magic, "opcode": op, "status": status, "opaque": opaque,
                    "cas": cas, "extras": body[:elen], "key": body[elen:elen + klen],
                    "value": body[elen + klen:], "raw": data[off:off + BIN_HDR.size + blen]})
        off += BIN_HDR.size + blen
    return out


def parse_values(data):
    """An ASCII retrieval reply: ([(key, flags, value, cas or None)], complete). complete is
    True when the reply ends with END right after the last value, False when more must
    come; ValueError when it is not a retrieval reply (or has bytes after END)."""
    items = []
    off = 0
    while True:
        nl = data.find(b"\r\n", off)
        if nl < 0:
            return items, False
        line = data[off:nl]
        if line == b"END":
            if nl + 2 != len(data):
                raise ValueError("bytes after END: %r" % data[nl + 2:nl + 40])
            return items, True
        parts = line.split(b" ")
        if parts[0] != b"VALUE" or len(parts) not in (4, 5):
            raise ValueError("not a VALUE line: %r" % line[:80])
        n = int(parts[3])
        end = nl + 2 + n
        if len(data) < end + 2:
            return items, False
        if data[end:end + 2] != b"\r\n":
            raise ValueError("value of %r not followed by CRLF" % parts[1])
        items.append((parts[1], int(parts[2]), data[nl + 2:end],
                      int(parts[4]) if len(parts) == 5 else None))
        off = end + 2


def ascii_complete(data):
    """True when `data` is a whole ASCII retrieval reply (for collect_stream)."""
    try:
        return parse_values(data)[1]
    except ValueError:
        return True  # not going to get better: hand it to the caller


def mask_bin_cas(data):
    """The binary responses in `data` with their CAS fields zeroed (CAS values differ
    between two stores of the same item, everything else must not)."""
    parts = []
    for r in bin_responses(data):
        raw = bytearray(r["raw"])
        raw[16:24] = bytes(8)
        parts.append(bytes(raw))
    return b"".join(parts)


def family_of(host):
    """AF_INET6 for an IPv6 address (it has a colon), else AF_INET."""
    return socket.AF_INET6 if ":" in host else socket.AF_INET


class UdpClient:
    """One connected UDP socket (in namespace `ns`) to `server` = (ip, port); IPv4 or IPv6
    by the server's address."""

    def __init__(self, server, ns=None, bind=None, timeout=2.0, rcvbuf=8 << 20):
        self.server = server
        self.timeout = timeout
        self.sock = socket_in(ns, family_of(server[0]), socket.SOCK_DGRAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, 33, rcvbuf)  # SO_RCVBUFFORCE
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if bind:
            self.sock.bind((bind, 0))
        self.sock.connect(server)
        self.sock.setblocking(False)
        self.next_id = random.randrange(1, 0xFFFF)
        self.strays = []  # (req_id, seq, total, payload) of datagrams nobody waited for
        self.pending = {}  # req_id -> {seq: payload} for replies being collected
        # req_id -> [messages, current message {seq: payload}, done(bytes)] for replies of
        # several messages (memcached sends each hit of a multi-get as a message of its own)
        self.streams = {}

    def close(self):
        self.sock.close()

    def new_id(self):
        rid = self.next_id
        self.next_id = (self.next_id % 0xFFFF) + 1
        return rid

    def send(self, payload, req_id=None, seq=0, total=1):
        if req_id is None:
            req_id = self.new_id()
        self.pending.setdefault(req_id, {})
        self.sock.send(frame(req_id, payload, seq, total))
        return req_id

    def _recv_one(self, deadline):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return None
            try:
                return self.sock.recv(65536)
            except BlockingIOError:
                continue

    def _file(self, dgram):
        u = unframe(dgram)
        if u is None:
            self.strays.append((None, None, None, dgram))
            return
        rid, seq, total, _res, payload = u
        st = self.streams.get(rid)
        if st is not None:
            if total == 0:
                return  # an empty message (a quiet miss)
            if seq >= total or seq in st[1]:
                self.strays.append((rid, seq, total, payload))
                return
            st[1][seq] = payload
            if len(st[1]) == total:
                st[0].append(b"".join(st[1][i] for i in range(total)))
                st[1] = {}
            return
        got = self.pending.get(rid)
        if got is None or total == 0 or seq >= total or seq in got:
            self.strays.append((rid, seq, total, payload))
            return
        got[seq] = (total, payload)

    def _complete(self, rid):
        got = self.pending.get(rid, {})
        if not got:
            return False
        total = next(iter(got.values()))[0]
        return len(got) == total and all(t == total for t, _ in got.values())

    def collect(self, req_id, timeout=None):
        """The reassembled payload of the reply to req_id; raises Timeout."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self._complete(req_id):
            d = self._recv_one(deadline)
            if d is None:
                got = self.pending.pop(req_id, {})
                raise Timeout("req %d: %d of %s datagrams" % (
                    req_id, len(got), next(iter(got.values()))[0] if got else "?"))
            self._file(d)
        got = self.pending.pop(req_id)
        self.last_datagrams = len(got)
        return b"".join(got[s][1] for s in range(len(got)))

    def send_stream(self, payload, done, req_id=None):
        """Send a request whose reply may be several messages; done(bytes) says when the
        messages so far make the whole reply. Collect it with collect_stream()."""
        if req_id is None:
            req_id = self.new_id()
        self.streams[req_id] = [[], {}, done]
        self.sock.send(frame(req_id, payload))
        return req_id

    def collect_stream(self, req_id, timeout=None):
        """The messages of the reply to req_id, joined; raises Timeout."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        st = self.streams[req_id]
        while not (not st[1] and st[0] and st[2](b"".join(st[0]))):
            d = self._recv_one(deadline)
            if d is None:
                self.streams.pop(req_id, None)
                raise Timeout("req %d: %d messages" % (req_id, len(st[0])))
            self._file(d)
        self.streams.pop(req_id)
        return b"".join(st[0])

    def request(self, payload, timeout=None, req_id=None):
        return self.collect(self.send(payload, req_id), timeout)

    def drain(self, wait=0.3):
        """Read whatever arrives within `wait` seconds; it all counts as strays."""
        deadline = time.monotonic() + wait
        while True:
            d = self._recv_one(deadline)
            if d is None:
                return self.strays
            self._file(d)

    def expect_silence(self, wait=0.5):
        """True when nothing at all arrives within `wait` seconds."""
        before = len(self.strays)
        self.drain(wait)
        return len(self.strays) == before


class TcpClient:
    """A TCP connection to a node (from namespace `ns`) for direct checks."""

    def __init__(self, server, ns=None, timeout=5.0):
        self.sock = socket_in(ns, family_of(server[0]), socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(server)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _fill(self):
        d = self.sock.recv(1 << 20)
        if not d:
            raise ConnectionError("node closed the connection")
        self.buf += d

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        ln, self.buf = self.buf.split(b"\r\n", 1)
        return ln

    def exact(self, n):
        while len(self.buf) < n:
            self._fill()
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def set(self, key, value, flags=0, exptime=0):
        self.sock.sendall(b"set %s %d %d %d\r\n" % (key, flags, exptime, len(value)) +
                          value + b"\r\n")
        ln = self.line()
        if ln != b"STORED":
            raise RuntimeError("set %r: %r" % (key, ln))

    def get(self, key):
        """The value, or None when the node does not hold the key."""
        self.sock.sendall(b"get %s\r\n" % key)
        ln = self.line()
        if ln == b"END":
            return None
        parts = ln.split()
        if parts[0] != b"VALUE":
            raise RuntimeError("get %r: %r" % (key, ln))
        value = self.exact(int(parts[3]) + 2)[:-2]
        if self.line() != b"END":
            raise RuntimeError("get %r: no END" % key)
        return value

    def get_many(self, keys):
        """{key: value} for the keys the node holds, one multi-get."""
        self.sock.sendall(b"get " + b" ".join(keys) + b"\r\n")
        out = {}
        while True:
            ln = self.line()
            if ln == b"END":
                return out
            parts = ln.split()
            if parts[0] != b"VALUE":
                raise RuntimeError("get_many: %r" % ln)
            out[parts[1]] = self.exact(int(parts[3]) + 2)[:-2]

    def stats(self):
        self.sock.sendall(b"stats\r\n")
        out = {}
        while True:
            ln = self.line()
            if ln == b"END":
                return out
            _, k, v = ln.decode().split(" ", 2)
            out[k] = v


def parse_addr(s, port=11211):
    """IP[:PORT] or [IPV6][:PORT] (a bare IPv6 address takes the default port)."""
    if s.startswith("["):
        host, _, rest = s[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else port
    if s.count(":") > 1:
        return s, port
    host, _, p = s.partition(":")
    return host, int(p) if p else port


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True,
                    help="IP[:PORT] or [IPV6][:PORT] (default port 11211)")
    ap.add_argument("--bind", help="local source address")
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--binary", action="store_true",
                    help="CMD is OP KEY [VALUE]: send one binary request")
    ap.add_argument("cmd", nargs="+", help="request lines (joined with CRLF)")
    a = ap.parse_args()
    c = UdpClient(parse_addr(a.server), bind=a.bind, timeout=a.timeout)
    if a.binary:
        op, key = a.cmd[0], a.cmd[1].encode() if len(a.cmd) > 1 else b""
        val = a.cmd[2].encode() if len(a.cmd) > 2 else b""
        req = bin_set(key, val, op=op) if op in ("set", "add", "replace") else \
            bin_request(op, key)
    else:
        req = b"".join(x.encode() + b"\r\n" for x in a.cmd)
    try:
        reply = c.request(req)
    except Timeout as e:
        print("timeout: %s" % e, file=sys.stderr)
        return 1
    if a.binary:
        for r in bin_responses(reply):
            print("opcode=0x%02x status=0x%04x opaque=%d cas=%d key=%r value=%r" % (
                r["opcode"], r["status"], r["opaque"], r["cas"], r["key"], r["value"]))
    else:
        sys.stdout.buffer.write(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
