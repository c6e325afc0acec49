#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live check: the `twemproxy` placement equals a running nutcracker's.

Starts memcached instances on loopback, and for each nutcracker configuration
(distribution: ketama; hash fnv1a_64, md5, every other hash nutcracker offers; named
servers; unnamed servers on port 11211; hash_tag "{}") sets keys through nutcracker, asks
every memcached directly which keys it holds, and compares that with what `compat_assign`
(pl_lookup) says. Keys include bytes >= 0x80, which some of twemproxy's hashes sign-extend.

  compat_nutcracker.py --assign PATH [--keys N] [--record DIR] [--only NAME...]

--record DIR also writes each configuration's observed owners as a golden file
DIR/compat_twemproxy_<name>.tsv (format: compat_golden.h). Loopback only; every process
started here is stopped on exit, also on failure. Exit 0 pass, 1 fail, 77 skip (no
memcached or nutcracker binary).
"""

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SERVERS = 5
HASHES = ["fnv1a_64", "md5", "one_at_a_time", "crc32", "crc32a", "fnv1_64", "fnv1_32",
          "fnv1a_32", "hsieh", "murmur", "jenkins"]
WEIGHTS = [1, 2, 1, 3, 1]
NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]


def escape(key: bytes) -> str:
    """compat_golden.h's key escaping: %XX for '%' and bytes outside 0x21..0x7e."""
    return "".join(chr(b) if 0x20 < b < 0x7f and b != 0x25 else "%%%02X" % b for b in key)


def make_tag_keys():
    """Keys for the hash_tag configuration: tagged, empty tags, unclosed and repeated tags."""
    keys = []
    for i in range(400):
        keys.append(b"user:{%d}:profile" % (i % 40))
        keys.append(b"{%d}" % i)
    keys += [b"{}", b"{}x", b"x{}", b"{", b"}", b"a{b", b"a}b{c", b"{a}{b}", b"{{a}}", b"x{}{y}",
             b"{\xe9t\xe9}:1", b"pre{mid}post", b"}{", b"{}{}"]
    return keys


def make_keys(n: int):
    """Deterministic keys: user:N, printable random, random with bytes >= 0x80; the first
    80% at most 32 bytes long (these are recorded in golden files), the rest 100..250 bytes
    (checked live only)."""
    rng = random.Random(20261130)
    alphabet = [b for b in range(0x21, 0x7f)] + list(range(0x80, 0x100))
    keys = []
    for i in range(n):
        short = i < n * 4 // 5
        size = rng.randrange(1, 33) if short else rng.randrange(100, 251)
        if i % 3 == 0 and short:
            keys.append(b"user:%d" % i)
        elif i % 3 == 1:
            keys.append(bytes(rng.randrange(0x21, 0x7f) for _ in range(size)))
        else:
            keys.append(bytes(rng.choice(alphabet) for _ in range(size)))
    return list(dict.fromkeys(keys))  # unique, order kept


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_free(host, port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            return True
        except OSError:
            return False


def wait_listen(host, port, proc, what, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s before listening" % (what, proc.returncode))
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("%s did not listen on %s:%d" % (what, host, port))


class Conn:
    """A blocking memcached text-protocol connection with a read buffer."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data: bytes):
        self.sock.sendall(data)

    def line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


def set_keys(conn, keys, batch=100):
    for i in range(0, len(keys), batch):
        part = keys[i:i + batch]
        conn.send(b"".join(b"set %s 0 0 1\r\nx\r\n" % k for k in part))
        for k in part:
            reply = conn.line()
            if reply != b"STORED":
                raise RuntimeError("set %r through nutcracker: %r" % (k, reply))


def held_keys(conn, keys, batch=50):
    """The subset of keys this memcached holds."""
    held = set()
    for i in range(0, len(keys), batch):
        conn.send(b"get " + b" ".join(keys[i:i + batch]) + b"\r\n")
        while True:
            line = conn.line()
            if line == b"END":
                break
            parts = line.split(b" ")
            if parts[0] != b"VALUE":
                raise RuntimeError("memcached get: %r" % line)
            held.add(parts[1])
            conn.exact(int(parts[3]) + 2)
    return held


class Fleet:
    """memcached processes and nutcracker runs, all stopped by close()."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.as_root = os.geteuid() == 0

    def start_memcached(self, host, port):
        cmd = ["memcached", "-l", host, "-p", str(port), "-U", "0", "-m", "64", "-t", "1",
               "-c", "64"]
        if self.as_root:
            cmd += ["-u", "root"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        wait_listen(host, port, proc, "memcached %s:%d" % (host, port))
        return proc

    def run_nutcracker(self, name, hash_name, servers, keys, hash_tag=None):
        """servers: list of (host, port, weight, name or None). Sets keys through it."""
        listen = free_port()
        stats = free_port()
        lines = ["%s:%d:%d%s" % (h, p, w, " " + n if n else "") for h, p, w, n in servers]
        conf = os.path.join(self.tmp, "nutcracker-%s.yml" % name)
        with open(conf, "w") as f:
            f.write("pool:\n  listen: 127.0.0.1:%d\n  hash: %s\n  distribution: ketama\n"
                    "  auto_eject_hosts: false\n  timeout: 5000\n" % (listen, hash_name))
            if hash_tag:
                f.write('  hash_tag: "%s"\n' % hash_tag)
            f.write("  servers:\n")
            for line in lines:
                f.write("   - %s\n" % line)
        log = os.path.join(self.tmp, "nutcracker-%s.log" % name)
        proc = subprocess.Popen(["nutcracker", "-c", conf, "-o", log, "-s", str(stats),
                                 "-a", "127.0.0.1", "-p", os.path.join(self.tmp, "nc.pid")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        try:
            try:
                wait_listen("127.0.0.1", listen, proc, "nutcracker (%s)" % name)
            except RuntimeError as e:
                # Say why: nutcracker's own last words are in its log.
                try:
                    with open(log, errors="replace") as f:
                        tail = " | ".join(f.read().splitlines()[-3:])
                except OSError as oe:
                    tail = "no log: %s" % oe
                raise RuntimeError("%s (log: %s)" % (e, tail)) from None
            conn = Conn("127.0.0.1", listen)
            try:
                set_keys(conn, keys)
            finally:
                conn.close()
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self.procs.remove(proc)

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []


def flush(servers):
    for host, port, _, _ in servers:
        conn = Conn(host, port)
        try:
            conn.send(b"flush_all\r\n")
            if conn.line() != b"OK":
                raise RuntimeError("flush_all on %s:%d" % (host, port))
        finally:
            conn.close()


def observed_owners(servers, keys):
    """key -> index of the memcached that holds it; each key must be on exactly one."""
    owner = {}
    for idx, (host, port, _, _) in enumerate(servers):
        conn = Conn(host, port)
        try:
            for k in held_keys(conn, keys):
                if k in owner:
                    raise RuntimeError("key %r on servers %d and %d" % (k, owner[k], idx))
                owner[k] = idx
        finally:
            conn.close()
    missing = [k for k in keys if k not in owner]
    if missing:
        raise RuntimeError("%d keys on no server (first %r)" % (len(missing), missing[0]))
    return owner


def member_name(host, port, name):
    """nutcracker's server name: the given one, else host (port 11211) or host:port."""
    if name:
        return name
    return host if port == 11211 else "%s:%d" % (host, port)


def fleet_text(hash_name, servers, hash_tag=None):
    out = ["hash\t%s" % hash_name] + (["hash_tag\t%s" % hash_tag] if hash_tag else [])
    for host, port, weight, name in servers:
        out.append("member\t%s\t%s\t%d\t%d" % (member_name(host, port, name), host, port, weight))
    return out


def ringway_owners(assign, hash_name, servers, keys, hash_tag=None):
    text = fleet_text(hash_name, servers, hash_tag) + ["key\t%s" % escape(k) for k in keys]
    res = subprocess.run([assign, "--algo", "twemproxy", "--hash", hash_name]
                         + (["--hash-tag", hash_tag] if hash_tag else []),
                         input=("\n".join(text) + "\n").encode("latin-1"),
                         capture_output=True, check=False)
    if res.returncode != 0:
        raise RuntimeError("compat_assign: %s" % res.stderr.decode(errors="replace"))
    got = {}
    for line in res.stdout.decode("latin-1").splitlines():
        _, key, idx = line.split("\t")
        got[key] = int(idx)
    return got


def record(path, name, hash_name, servers, keys, owner, hash_tag=None):
    with open(path, "w", encoding="latin-1") as f:
        f.write("# Golden owners for the `twemproxy` algorithm, configuration %s, recorded from\n"
                "# a running nutcracker 0.5.0 (distribution: ketama, hash: %s): each key was set\n"
                "# through nutcracker and found on the memcached listed as its owner, by\n"
                "# tests/unit/placement/compat_nutcracker.py --record. Format: compat_golden.h.\n"
                % (name, hash_name))
        f.write("\n".join(fleet_text(hash_name, servers, hash_tag)) + "\n")
        for k in keys:
            if len(k) <= 32:
                f.write("key\t%s\t%d\n" % (escape(k), owner[k]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--assign", required=True, help="path to compat_assign")
    ap.add_argument("--keys", type=int, default=3000)
    ap.add_argument("--record", metavar="DIR")
    ap.add_argument("--only", nargs="*", help="configuration names to run")
    args = ap.parse_args()

    for tool in ("memcached", "nutcracker"):
        if shutil.which(tool) is None:
            print("1..0 # SKIP %s not installed (scripts/setup-deps.sh installs it)" % tool)
            return 77

    # meson's timeout sends SIGTERM: turn it into SystemExit so `finally` stops every process.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    keys = make_keys(args.keys)
    tmp = tempfile.mkdtemp(prefix="ringway-compat-")
    fleet = Fleet(tmp)
    failed = 0
    try:
        ports = [free_port() for _ in range(SERVERS)]
        unnamed = [("127.0.0.1", p, w, None) for p, w in zip(ports, WEIGHTS)]
        named = [("127.0.0.1", p, w, n) for p, w, n in zip(ports, WEIGHTS, NAMES)]
        for _, port, _, _ in unnamed:
            fleet.start_memcached("127.0.0.1", port)
        configs = [(h, h, unnamed, None) for h in HASHES]
        configs.append(("named", "fnv1a_64", named, None))
        configs.append(("hashtag", "fnv1a_64", unnamed, "{}"))
        # Port 11211 on other loopback addresses: nutcracker then names a server by host only.
        default_port = [("127.0.0.%d" % (i + 2), 11211, w, None) for i, w in enumerate(WEIGHTS)]
        if all(port_free(h, p) for h, p, _, _ in default_port):
            for host, port, _, _ in default_port:
                fleet.start_memcached(host, port)
            configs.append(("port11211", "md5", default_port, None))
        else:
            print("# note: port 11211 busy on 127.0.0.2-6; the port11211 configuration is "
                  "not run")
        if args.only:
            configs = [c for c in configs if c[0] in args.only]
        print("1..%d" % len(configs))
        for n, (name, hash_name, servers, tag) in enumerate(configs, 1):
            try:
                ckeys = keys + make_tag_keys() if tag else keys
                ckeys = list(dict.fromkeys(ckeys))
                flush(servers)
                fleet.run_nutcracker(name, hash_name, servers, ckeys, tag)
                owner = observed_owners(servers, ckeys)
                ours = ringway_owners(args.assign, hash_name, servers, ckeys, tag)
                diff = [k for k in ckeys if ours.get(escape(k)) != owner[k]]
                per = [sum(1 for k in ckeys if owner[k] == i) for i in range(len(servers))]
                if args.record:
                    record(os.path.join(args.record, "compat_twemproxy_%s.tsv" % name),
                           name, hash_name, servers, ckeys, owner, tag)
                if diff:
                    failed += 1
                    k = diff[0]
                    print("not ok %d - %s: %d of %d keys differ from nutcracker (first %s: "
                          "nutcracker %d, ringway %s)" % (n, name, len(diff), len(ckeys),
                                                          escape(k), owner[k], ours.get(escape(k))))
                elif min(per) == 0 and hash_name != "crc32":
                    # crc32 (libmemcached's) returns 15 bits: under ketama's 32-bit points
                    # nearly every key falls before the first point, so nutcracker itself
                    # sends (almost) all keys to one server. Exactness is what counts there.
                    failed += 1
                    print("not ok %d - %s: a server got no key %s" % (n, name, per))
                else:
                    print("ok %d - %s (hash %s): %d keys placed as nutcracker placed them, "
                          "per server %s" % (n, name, hash_name, len(ckeys), per))
            except (RuntimeError, OSError) as e:
                failed += 1
                print("not ok %d - %s: %s" % (n, name, e))
    finally:
        fleet.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
