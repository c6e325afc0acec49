#!/usr/bin/env python3
"""ringway-sync against a real etcd and a router's control library (ctl_fake_router): no DPDK.

Issue 27 item 6. The agent judges agreement by digest as well as revision, so:
1. a router whose local epoch is above the fleet's revision (as after a start from a state
   file, or local changes) is brought to the fleet's membership and epoch, and reported so;
2. a value whose placement settings differ from the router's only in hash_tag is refused and
   changes nothing: the router's epoch and digest stay, the report says refused;
3. a router at exactly the fleet's revision with another membership converges too;
4. a router changed behind the agent's back (`fleet local` and a change) is converged again;
5. (issue 28 item 6) `init`/`restore --router SOCKET` store a running router's membership;
   restore over an unreadable value exits 0 with a note (what restore is for), and every
   run that stores nothing exits non-zero; a no-op change commits, as the local socket does.
Before the fix the agent skipped every revision at or below the router's epoch (1, 3: the
router kept its ring and the report claimed revision R), and applied the members of 2 under
the router's own hash_tag while reporting the value refused.

Usage: test_sync.py RINGWAY_SYNC RINGWAYCTL CTL_FAKE_ROUTER. TAP out; skipped without etcd.
"""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

M64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, v):
    return (_rotl((acc + v * P2) & M64, 31) * P1) & M64


def xxh64(data, seed=0):
    """XXH64 (the state file's checksum), written from the algorithm's description."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M64, (seed + P2) & M64, seed, (seed - P1) & M64]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], int.from_bytes(data[i + 8 * k:i + 8 * k + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M64
        for k in range(4):
            h = ((h ^ _round(0, v[k])) * P1 + P4) & M64
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        h ^= _round(0, int.from_bytes(data[i:i + 8], "little"))
        h = (_rotl(h, 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        h ^= (int.from_bytes(data[i:i + 4], "little") * P1) & M64
        h = (_rotl(h, 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M64
        h = (_rotl(h, 11) * P1) & M64
        i += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    return h ^ (h >> 32)


def state_text(members, hash_tag="none"):
    """A membership in the state-file form the etcd key holds (epoch 0: etcd numbers it)."""
    body = "ringway-state 1\nepoch 0\nalgo ring\nvnodes 0\nmaglev_size 0\nkey_hash xxh3\n" \
           "hash_tag %s\nmembers %d\n" % (hash_tag, len(members))
    body += "".join("member %s %s weight %d\n" % m for m in members)
    return body + "checksum %016x\n" % xxh64(body.encode())


class Tap:
    def __init__(self):
        self.n = self.failed = 0

    def ok(self, cond, what):
        self.n += 1
        self.failed += not cond
        # One TAP line: a description that quotes a multi-line reply keeps it on that line.
        what = " / ".join(ln for ln in str(what).splitlines() if ln.strip())
        print("%sok %d - %s" % ("" if cond else "not ", self.n, what), flush=True)
        return cond

    def done(self):
        print("1..%d" % self.n)
        return 1 if self.failed else 0


def b64(s):
    return base64.b64encode(s.encode()).decode()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Etcd:
    def __init__(self, tmp):
        self.url = "http://127.0.0.1:%d" % free_port()
        peer = "http://127.0.0.1:%d" % free_port()
        self.log = open(os.path.join(tmp, "etcd.log"), "w")
        self.p = subprocess.Popen(
            ["etcd", "--name", "u", "--data-dir", os.path.join(tmp, "etcd"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", "u=" + peer], stdout=self.log, stderr=subprocess.STDOUT)

    def call(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=3) as r:
            return json.loads(r.read())

    def wait(self):
        end = time.time() + 30
        while time.time() < end:
            try:
                self.call("/v3/kv/range", {"key": b64("/x")})
                return True
            except OSError:
                time.sleep(0.1)
        return False

    def put(self, key, value):
        return int(self.call("/v3/kv/put", {"key": b64(key), "value": b64(value)})
                   ["header"]["revision"])

    def get(self, key):
        r = self.call("/v3/kv/range", {"key": b64(key)})
        kvs = r.get("kvs", [])
        return (base64.b64decode(kvs[0]["value"]).decode() if kvs else None,
                int(r["header"]["revision"]))

    def report(self, key):
        v, _ = self.get(key)
        return json.loads(v) if v is not None else None

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


class Router:
    """ctl_fake_router: the control library on a socket, publishing nowhere."""

    def __init__(self, fake, tmp):
        self.sock = os.path.join(tmp, "router.sock")
        self.p = subprocess.Popen([fake, "--socket", self.sock, "--state",
                                   os.path.join(tmp, "state"), "--nodes", "3"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.p.stdout.readline()  # "ready"

    def cmd(self, line):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(self.sock)
        s.sendall(line.encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            buf += s.recv(4096)
        s.close()
        return buf.decode().strip()

    def epoch(self):
        head = self.cmd("fleet")
        w = head.split()  # OK fleet MODE epoch E digest D
        if len(w) < 7:
            raise OSError("fleet: %r" % head)
        kv = dict(zip(w[3::2], w[4::2]))
        return int(kv["epoch"]), kv["digest"]

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(5)


def main():
    if len(sys.argv) != 4:
        print("usage: test_sync.py RINGWAY_SYNC RINGWAYCTL CTL_FAKE_ROUTER", file=sys.stderr)
        return 2
    sync, ctl, fake = sys.argv[1:]
    if shutil.which("etcd") is None:
        print("1..0 # SKIP etcd not installed (scripts/setup-deps.sh)")
        return 0
    tmp = tempfile.mkdtemp(prefix="ringway-sync-test-")
    t = Tap()
    etcd = router = agent = None
    key, mine = "/ringway/u/membership", "/ringway/u/routers/r1"
    try:
        etcd = Etcd(tmp)
        t.ok(etcd.wait(), "etcd up on %s" % etcd.url)
        router = Router(fake, tmp)

        def fleet(*args):
            r = subprocess.run([ctl, "--etcd", etcd.url, "--cluster", "u"] + list(args),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
            return r.returncode, r.stdout.decode(), r.stderr.decode()

        def start_agent():
            return subprocess.Popen([sync, "--etcd", etcd.url, "--cluster", "u", "--name",
                                     "r1", "--socket", router.sock, "--ttl", "2",
                                     "--timeout", "1000"],
                                    stdout=open(os.path.join(tmp, "sync.log"), "a"),
                                    stderr=subprocess.STDOUT)

        def fleet_digest():
            rc, out, _ = fleet("get")
            w = out.split("\n")[0].split()
            return dict(zip(w[1::2], w[2::2])).get("digest") if rc == 0 else None

        def wait_for(cond, timeout=15.0):
            end = time.time() + timeout
            while time.time() < end:
                v = cond()
                if v:
                    return v
                time.sleep(0.1)
            return cond()

        # the checksum this test writes is the one the router's state file carries
        router.cmd("weight n1 2")
        with open(os.path.join(tmp, "state")) as f:
            text = f.read()
        body, last = text.rsplit("checksum ", 1)
        t.ok(int(last, 16) == xxh64(body.encode()), "xxh64 here = the state file's checksum")

        # ---- 1. a router ahead of the fleet: local epoch 40, the fleet's revision lower
        router.cmd("replace epoch 40 n1 198.18.1.1 ; n2 198.18.1.2")
        ms = [("a", "198.18.3.1:11211", 1), ("b", "198.18.3.2:11211", 2),
              ("c", "198.18.3.3:11211", 1)]
        rev = etcd.put(key, state_text(ms))
        t.ok(rev < 40, "the fleet's revision %d is below the router's epoch 40" % rev)
        want = fleet_digest()
        agent = start_agent()
        t.ok(wait_for(lambda: router.epoch() == (rev, want)),
             "the router ahead at epoch 40 converges to revision %d digest %s: %r" %
             (rev, want, router.epoch()))
        rep = wait_for(lambda: (lambda r: r if r and r["revision"] == rev else None)(
            etcd.report(mine)))
        t.ok(rep is not None and rep["digest"] == want and "error" not in rep,
             "its report: revision %d, the fleet's digest, no error: %r" % (rev, rep))
        rc, out, _ = fleet("status")
        t.ok(rc == 0 and " agree 1" in out.split("\n")[0] and "agrees yes" in out,
             "status: the router agrees: %s" % out.strip())

        # ---- 2. settings differing only in hash_tag: refused, nothing changes
        before = router.epoch()
        bad = etcd.put(key, state_text(ms[:2], hash_tag="{}"))
        rep = wait_for(lambda: (lambda r: r if r and r.get("error_revision") == bad else None)(
            etcd.report(mine)))
        t.ok(rep is not None and "hash_tag" in rep.get("error", ""),
             "a value differing in hash_tag is reported refused: %r" % rep)
        time.sleep(0.5)
        t.ok(router.epoch() == before,
             "and changes nothing: epoch and digest %r stay (now %r)" % (before,
                                                                         router.epoch()))
        rc, out, _ = fleet("status")
        t.ok("agrees no" in out and " agree 0" in out.split("\n")[0],
             "status: the router does not agree: %s" % out.strip())
        t.ok(wait_for(lambda: router.cmd("fleet").endswith(" refused %d" % bad)),
             "the router says so itself: `fleet` ends in `refused %d` (%s)" % (
                 bad, router.cmd("fleet")))

        # ---- 3. the router at exactly the fleet's revision with another membership
        good = etcd.put(key, state_text(ms))
        t.ok(wait_for(lambda: router.epoch() == (good, want)),
             "back to a good value %d: converged" % good)
        t.ok("refused" not in router.cmd("fleet"), "and the router's refusal ended")
        agent.send_signal(signal.SIGTERM)
        agent.wait(5)
        agent = None
        # the agent's lease expires (2 s): after that nothing else writes to etcd
        t.ok(wait_for(lambda: etcd.report(mine) is None, 10), "the stopped agent's key expired")
        _, now = etcd.get(key)
        router.cmd("fleet local")
        head = router.cmd("replace epoch %d n1 198.18.1.1 ; n2 198.18.1.2 weight 3" % (now + 1))
        ms2 = ms[:2] + [("d", "198.18.3.4:11211", 1)]
        same = etcd.put(key, state_text(ms2))
        want2 = fleet_digest()
        t.ok(same == now + 1 and router.epoch()[0] == same and router.epoch()[1] != want2,
             "router at epoch %d = the fleet's revision, another digest (%s)" % (same, head))
        agent = start_agent()
        t.ok(wait_for(lambda: router.epoch() == (same, want2)),
             "equal numbers, different digests: the router converges: %r" % (router.epoch(),))
        rep = wait_for(lambda: (lambda r: r if r and r["revision"] == same else None)(
            etcd.report(mine)))
        t.ok(rep is not None and rep["digest"] == want2, "and reports it: %r" % rep)

        # ---- 4. changed behind the agent's back: converged again, never reported as agreeing
        router.cmd("fleet local")
        router.cmd("weight a 5")
        t.ok(wait_for(lambda: router.epoch() == (same, want2), 20),
             "a local change behind the agent is undone: %r" % (router.epoch(),))
        with open(os.path.join(tmp, "sync.log")) as f:
            log = f.read()
        t.ok("at or above the fleet's revision" in log and "moved outside the fleet" in log,
             "the agent logs both: the router ahead, the router moved")

        # ---- 5. issue 28 item 6: init and restore from a running router; a no-op change
        def on(cluster, *args):
            r = subprocess.run([ctl, "--etcd", etcd.url, "--cluster", cluster] + list(args),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
            return r.returncode, r.stdout.decode(), r.stderr.decode()

        agent.send_signal(signal.SIGTERM)
        agent.wait(5)
        agent = None
        live = router.epoch()[1]
        rc, out, err = on("v", "init", "--router", router.sock)
        t.ok(rc == 0 and out.startswith("OK revision") and ("digest %s" % live) in out,
             "init --router: the live membership stored, no state file (%s%s)" % (out, err))
        rc, out, err = on("v", "init", "--router", router.sock)
        t.ok(rc == 1 and "conflict" in err, "a second init is refused: %s" % err.strip())
        etcd.put("/ringway/v/membership", "not a membership\n")
        rc, out, err = on("v", "restore", "--router", router.sock)
        t.ok(rc == 0 and out.startswith("OK revision") and "ERROR" not in err and
             "note: the stored membership" in err and "unreadable" in err,
             "restore over an unreadable value: stored, exit 0, a note, no ERROR: %s%s" %
             (out, err))
        rc, out, err = on("v", "get")
        t.ok(rc == 0 and ("digest %s" % live) in out, "get: the router's digest back")
        for args, why in ((["restore", os.path.join(tmp, "nosuch")], "a missing file"),
                          (["restore", "--router", os.path.join(tmp, "nosock")],
                           "no router on the socket"),
                          (["restore"], "no source")):
            rc, out, err = on("v", *args)
            t.ok(rc != 0 and out == "", "restore from %s: exit %d, nothing stored (%s)" %
                 (why, rc, err.strip()))
        r = subprocess.run([ctl, "--etcd", "http://127.0.0.1:1", "--cluster", "v", "--timeout",
                            "300", "restore", "--router", router.sock],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
        t.ok(r.returncode == 2, "restore with etcd unreachable: exit %d" % r.returncode)
        # a change that changes nothing: committed, as the router's own socket commits it
        rc, out, _ = on("v", "get")
        rev0 = int(out.split()[2])
        rc2, out2, err2 = on("v", "weight", "a", "1")
        t.ok(rc2 == 0 and int(out2.split()[2]) > rev0 and ("digest %s" % live) in out2,
             "a no-op weight through etcd: a new revision, the same digest (%s)" % out2.strip())
        e0 = router.epoch()[0]
        router.cmd("fleet local")
        head = router.cmd("weight a 1")
        t.ok(head == "OK epoch %d" % (e0 + 1) and router.epoch()[1] == live,
             "and the local socket's no-op weight likewise: a new epoch, the same digest (%s)"
             % head)
    finally:
        if agent is not None:
            agent.send_signal(signal.SIGTERM)
            agent.wait(5)
        if router is not None:
            router.stop()
        if etcd is not None:
            etcd.stop()
        if t.failed:
            try:
                with open(os.path.join(tmp, "sync.log")) as f:
                    sys.stdout.write("".join("# " + ln for ln in f.readlines()[-30:]))
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
