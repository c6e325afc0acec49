#!/usr/bin/env python3
"""Capture golden memcached replies over UDP for lib/mcproto's tests and fuzz corpus.

Starts the Debian memcached on loopback (UDP only: -U PORT -p 0), sends each request below
as one datagram with the 8-byte frame header, and saves:
  <name>.req    the request datagram payload (frame header + request bytes)
  <name>.reply  the reply datagrams in the order received, each as a 2-byte big-endian
                length followed by the datagram payload (frame header included)
Setup requests (stores the cases depend on) are sent the same way but not saved.

It also writes the fuzz seed corpora (when OUTDIR is the default):
  tests/fuzz/corpus/mcproto_request/<name>  the request datagram
  tests/fuzz/corpus/mcproto_reply/<name>    the request datagram and the reply datagrams, each
                                            as a 2-byte length + bytes (fuzz_mcproto_reply.c)

Usage: capture.py [OUTDIR]   (default: the directory of this script)
Re-run it after changing the cases; the tests assert what each case must contain, not
byte-for-byte equality, except where memcached's reply is deterministic.
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import time

MEMCACHED = shutil.which("memcached") or "/usr/bin/memcached"
BIG_LEN = 5000  # a value whose reply spans several 1400-byte datagrams


def big_value(n=BIG_LEN):
    # Must match the tests' generator: byte i is 'a' + i % 26.
    return bytes(ord("a") + i % 26 for i in range(n))


def bin_req(opcode, key=b"", extras=b"", value=b"", opaque=0, cas=0):
    body = extras + key + value
    hdr = struct.pack(">BBHBBHIIQ", 0x80, opcode, len(key), len(extras), 0, 0, len(body),
                      opaque, cas)
    return hdr + body


GET, SET, DELETE, INCR, NOOP, VERSION, GETK, GETKQ, GETQ, TOUCH, GAT = (
    0x00, 0x01, 0x04, 0x05, 0x0A, 0x0B, 0x0C, 0x0D, 0x09, 0x1C, 0x1D)

SETUP = [
    b"set foo 5 0 3\r\nbar\r\n",
    b"set baz 0 0 4\r\nquux\r\n",
    b"set del1 0 0 1\r\nx\r\n",
    b"set num 0 0 2\r\n10\r\n",
    b"set big 3 0 %d\r\n" % BIG_LEN + big_value() + b"\r\n",
    b"ms mkey 2 T0 F7\r\nhi\r\n",
    b"ms YmluAWtleQ== 1 b\r\nx\r\n",  # key "bin\x01key", base64
    b"set mnum 0 0 1\r\n5\r\n",
    b"set mdel 0 0 1\r\ny\r\n",
    bin_req(SET, b"bkey", struct.pack(">II", 0xDEADBEEF, 0), b"hello"),
    bin_req(SET, b"bkey2", struct.pack(">II", 1, 0), b"world"),
    bin_req(SET, b"bnum", struct.pack(">II", 0, 0), b"41"),
]

CASES = [
    # ASCII
    ("ascii_set", b"set newkey 9 0 5\r\nvalue\r\n"),
    ("ascii_get_hit", b"get foo\r\n"),
    ("ascii_get_miss", b"get nokey\r\n"),
    ("ascii_gets_hit", b"gets foo\r\n"),
    ("ascii_multiget", b"get foo nokey baz\r\n"),
    ("ascii_multiget_miss", b"get nokey1 nokey2\r\n"),
    ("ascii_multiget_big", b"get big foo big\r\n"),
    ("ascii_pipeline", b"get foo\r\ndelete nokey\r\nincr num 1\r\n"),
    ("ascii_gat_hit", b"gat 0 foo baz\r\n"),
    ("ascii_add_exists", b"add foo 0 0 1\r\nx\r\n"),
    ("ascii_replace_miss", b"replace nokey 0 0 1\r\nx\r\n"),
    ("ascii_append", b"append baz 0 0 1\r\n!\r\n"),
    ("ascii_cas_miss", b"cas nokey 0 0 1 1\r\nx\r\n"),
    ("ascii_cas_exists", b"cas foo 5 0 3 999999\r\nbar\r\n"),
    ("ascii_delete_hit", b"delete del1\r\n"),
    ("ascii_delete_miss", b"delete nokey\r\n"),
    ("ascii_incr", b"incr num 5\r\n"),
    ("ascii_decr_miss", b"decr nokey 1\r\n"),
    ("ascii_touch_hit", b"touch foo 0\r\n"),
    ("ascii_touch_miss", b"touch nokey 0\r\n"),
    ("ascii_version", b"version\r\n"),
    ("ascii_verbosity", b"verbosity 0\r\n"),
    ("ascii_unknown", b"bogus\r\n"),
    ("ascii_bad_chunk", b"set k 0 0 2\r\nabc\r\n"),
    ("ascii_get_big", b"get big\r\n"),
    ("ascii_stats", b"stats\r\n"),
    # meta
    ("meta_ms", b"ms mnew 3 T0 F1\r\nabc\r\n"),
    ("meta_mg_hit", b"mg mkey v f k O42 t\r\n"),
    ("meta_mg_miss", b"mg nokey v\r\n"),
    ("meta_mg_hd", b"mg mkey s\r\n"),
    ("meta_mg_base64", b"mg YmluAWtleQ== b v k\r\n"),
    ("meta_pipeline", b"mg mkey v q k\r\nmg nokey v q k\r\nmg foo v q k O7\r\nmn\r\n"),
    ("meta_pipeline_plain", b"mg mkey v\r\nmg nokey v\r\nmg foo v k\r\n"),
    ("meta_md_hit", b"md mdel\r\n"),
    ("meta_md_miss", b"md nokey q\r\nmn\r\n"),
    ("meta_ma", b"ma mnum v\r\n"),
    ("meta_me", b"me mkey\r\n"),
    ("meta_mn", b"mn\r\n"),
    ("meta_ms_bad", b"ms k 2\r\nabc\r\n"),
    ("meta_mg_big", b"mg big v\r\n"),
    # binary
    ("bin_set", bin_req(SET, b"bnew", struct.pack(">II", 2, 0), b"binval", opaque=0x1001)),
    ("bin_get_hit", bin_req(GET, b"bkey", opaque=0x1002)),
    ("bin_get_miss", bin_req(GET, b"nokey", opaque=0x1003)),
    ("bin_getk_hit", bin_req(GETK, b"bkey", opaque=0x1004)),
    ("bin_pipeline", bin_req(GETKQ, b"bkey", opaque=1) + bin_req(GETKQ, b"nokey", opaque=2) +
     bin_req(GETKQ, b"bkey2", opaque=3) + bin_req(NOOP, opaque=4)),
    ("bin_getq_pipeline", bin_req(GETQ, b"nokey", opaque=5) + bin_req(GETQ, b"bkey", opaque=6) +
     bin_req(NOOP, opaque=7)),
    ("bin_delete_miss", bin_req(DELETE, b"nokey", opaque=0x1005)),
    ("bin_incr", bin_req(INCR, b"bnum", struct.pack(">QQI", 1, 0, 0), opaque=0x1006)),
    ("bin_touch", bin_req(TOUCH, b"bkey", struct.pack(">I", 0), opaque=0x1007)),
    ("bin_gat", bin_req(GAT, b"bkey", struct.pack(">I", 0), opaque=0x1008)),
    ("bin_version", bin_req(VERSION, opaque=0x1009)),
    ("bin_noop", bin_req(NOOP, opaque=0x100A)),
    ("bin_get_big", bin_req(GET, b"big", opaque=0x100B)),
]


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Client:
    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect(("127.0.0.1", port))
        self.rid = 100

    def ask(self, payload, quiet_period=0.4):
        """Send one request datagram; return (request bytes, reply datagrams).

        memcached 1.6 sends each response of a request as its own message (seq 0..total-1),
        so there is no "last datagram" marker: collect until the socket stays quiet."""
        self.rid += 1
        dgram = struct.pack(">HHHH", self.rid, 0, 1, 0) + payload
        self.sock.send(dgram)
        replies = []
        self.sock.settimeout(quiet_period)
        while True:
            try:
                d = self.sock.recv(65536)
            except (socket.timeout, ConnectionRefusedError):
                break
            if struct.unpack(">H", d[:2])[0] != self.rid:
                continue  # a late reply to an earlier request
            replies.append(d)
        return dgram, replies


def wait_ready(client):
    for _ in range(50):
        _, r = client.ask(b"version\r\n", quiet_period=0.1)
        if r:
            return
        time.sleep(0.1)
    raise SystemExit("memcached did not answer on UDP")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else here
    corpus = None
    if len(sys.argv) <= 1:
        corpus = os.path.join(here, "..", "..", "fuzz", "corpus")
    port = free_udp_port()
    proc = subprocess.Popen([MEMCACHED, "-U", str(port), "-l", "127.0.0.1", "-p", "0", "-u",
                             "root", "-m", "64", "-t", "1"])
    try:
        client = Client(port)
        wait_ready(client)
        for req in SETUP:
            _, r = client.ask(req)
            if not r:
                raise SystemExit("setup request got no reply: %r" % req[:40])
        for name, req in CASES:
            dgram, replies = client.ask(req)
            if not replies:
                raise SystemExit("%s: no reply" % name)
            with open(os.path.join(out, name + ".req"), "wb") as f:
                f.write(dgram)
            with open(os.path.join(out, name + ".reply"), "wb") as f:
                for d in replies:
                    f.write(struct.pack(">H", len(d)) + d)
            if corpus:
                with open(os.path.join(corpus, "mcproto_request", name), "wb") as f:
                    f.write(dgram)
                with open(os.path.join(corpus, "mcproto_reply", name), "wb") as f:
                    f.write(struct.pack(">H", len(dgram)) + dgram)
                    for d in replies:
                        f.write(struct.pack(">H", len(d)) + d)
            print("%-22s %d datagram(s), %d bytes" % (name, len(replies),
                                                      sum(len(d) for d in replies)))
    finally:
        proc.terminate()
        proc.wait(timeout=5)


if __name__ == "__main__":
    main()
