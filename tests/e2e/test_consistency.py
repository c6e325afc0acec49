#!/usr/bin/env python3
"""The randomized consistency checker (issue 27): a seeded, model-based test of what clients
see across every transition the router passes through.

Several clients (ASCII, meta and binary; get, set, delete, ASCII multi-get) run against the
sandbox (real memcached nodes, the real ringway binary) while a fault schedule drawn from the
seed adds, removes, reweights and replaces members, freezes (SIGSTOP) and kills (SIGKILL +
restart) one node or two a second apart, fails a stand-in while the owner is down, heats,
cools and re-heats keys (`hot add` / `hot remove`), opens overlapping warm-up windows and
changes routes. Every value names its key and version (`<key>=v<N>;...`), and a model of
every write (its send time, its end, acknowledged or not) judges every reply:

  a hit must be the latest acknowledged write, or a write still in flight (or one whose
  reply was lost: maybe applied, until an acknowledged write sent after it gave up is
  acknowledged before the read is sent); a miss is always allowed; never an older version,
  never another key's value.

Also checked: the control socket answers within 100 ms throughout (a prober process of its
own; its own scheduling delay, from /proc/.../schedstat, is discounted), the accounting
identity, and mbufs, request slots, multi-gets, warm-up, dirty-key and heap memory back to
their baseline once idle, and a final read of every key after the faults.

A finding prints the seed, the key's write history around the read, the faults active and
a replay command line (the faults near the first finding, re-timed: a shrunk schedule).

  test_consistency.py [--seed N] [--seconds S] [--faults KIND,...] [--schedule SPEC]
                      [--json-out FILE] [--inject stale-writer] [--list-kinds]

Environment: RINGWAY, RINGWAYCTL (meson passes them); RINGWAY_CONSISTENCY_SEED,
RINGWAY_CONSISTENCY_SECONDS, RINGWAY_CONSISTENCY_FAULTS override the defaults.
Exit: 0 no finding, 1 findings or a failed check, 77 skipped (not root).
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import harness as h
import control_util as cu
from mcudp import ascii_complete, bin_request, bin_responses, bin_set, parse_values

# Every fault kind the schedule can draw. DEFAULT_FAULTS is what the e2e suite's seed runs:
# the kinds that find nothing on the code the suite runs against (see docs/transitions.md,
# "The consistency checker"; the lead enables more as the issue 27 fixes land).
KINDS = ("add", "remove", "weight", "replace", "stop", "kill", "stop2", "kill2", "standin",
         "hot", "warmup", "route", "etcd")
# With --routers 2 (fleet mode) membership changes go through etcd (`ringwayctl --etcd`),
# applied to both routers by their ringway-sync agents; "etcd" (kill etcd, restart it) is
# drawn only then.
FLEET_ONLY = ("etcd",)
CLUSTER = "cc"
# Every single-router kind, since stand-ins are cleaned of an outage's copies when the owner
# returns (issue 27; seed 27, 90 s: 0 findings, where the same run found 223 before). Off:
# etcd (fleet mode only).
DEFAULT_FAULTS = tuple(k for k in KINDS if k not in FLEET_ONLY)
DEFAULT_SEED = 27
NODES = 6            # sandbox nodes: node1..MEMBERS start as members, the rest are spares
MEMBERS = 4
MIN_MEMBERS = 3
REQUEST_MS = 200
CLIENT_TIMEOUT = 0.6  # > request_ms: the router's own answer (or none) comes first
KEYS = 160
HOT_KEYS = 8          # keys 0..HOT_KEYS-1 are read often and are the ones `hot` heats
FILL_TTL_S = 3
WARMUP_S = 4
CTL_LIMIT_MS = 100.0
PROBE_EVERY_S = 0.05
TAIL_S = 12.0         # no fault starts in the last TAIL_S seconds of the run

CONFIG_EXTRA = """
[health]
fail_down = 3
window_ms = 1000
probe_min_ms = 100
probe_max_ms = 1000
probe_timeout_ms = 200
up_successes = 2

[failover]
mode = next
failover_ttl_s = 60

[warmup]
window_s = %d
ttl_s = 60

[hotkeys]
interval_ms = 500
replicas = 3
fill_ttl_s = %d
""" % (WARMUP_S, FILL_TTL_S)


def now():
    return time.monotonic()


# ---------------------------------------------------------------- the fault schedule

class Event:
    """One fault: kind, start (s from the run's start) and its arguments (strings, floats)."""

    def __init__(self, kind, t, **args):
        self.kind, self.t, self.args = kind, round(t, 2), args

    def spec(self):
        a = ",".join("%s=%s" % (k, v) for k, v in sorted(self.args.items()))
        return "%s@%.2f%s" % (self.kind, self.t, (":" + a) if a else "")

    @staticmethod
    def parse(text):
        head, _, rest = text.strip().partition(":")
        kind, _, t = head.partition("@")
        if kind not in KINDS:
            raise ValueError("unknown fault kind %r (kinds: %s)" % (kind, ",".join(KINDS)))
        args = {}
        for kv in filter(None, rest.split(",")):
            k, _, v = kv.partition("=")
            try:
                v = float(v) if "." in v else int(v)
            except ValueError:
                pass
            args[k] = v
        return Event(kind, float(t), **args)

    def length(self):
        """Seconds from its start to its last action."""
        a = self.args
        if self.kind in ("stop", "kill"):
            return a["hold"]
        if self.kind in ("stop2", "kill2"):
            return a["hold"] + 1.0
        if self.kind == "standin":
            return a["before"] + a["hold"] + a["after"]
        if self.kind == "hot":
            return a["h1"] + a["cool"] + a["h2"]
        if self.kind in ("warmup", "route", "etcd"):
            return a.get("gap", a.get("hold", 0))
        return 0.0


def parse_schedule(text):
    return sorted((Event.parse(p) for p in text.split(";") if p.strip()), key=lambda e: e.t)


def schedule_spec(events):
    return ";".join(e.spec() for e in events)


def make_schedule(seed, seconds, kinds):
    """The faults of a run, drawn from the seed alone; a simulation of the membership keeps
    every command valid (at least MIN_MEMBERS members, adds from the spares) and keeps node
    faults apart (one at a time, none on a node being changed)."""
    rnd = random.Random(seed * 7919 + 1)
    members = ["node%d" % i for i in range(1, MEMBERS + 1)]
    spares = ["node%d" % i for i in range(MEMBERS + 1, NODES + 1)]
    events = []
    node_free = 2.0   # node faults and membership changes: one after another
    hot_free = 2.0
    route_free = 2.0
    t = 2.0
    end = seconds - TAIL_S
    kinds = list(kinds)
    while kinds and t < end:
        kind = rnd.choice(kinds)
        ev = None
        if kind == "hot":
            if t >= hot_free:
                keys = "+".join(str(k) for k in sorted(rnd.sample(range(HOT_KEYS), 5)))
                ev = Event("hot", t, keys=keys, h1=round(rnd.uniform(2, 5), 1),
                           # re-heated while cooling, or just after cooling ended (about
                           # FILL_TTL_S after the remove) while copies made during it live
                           cool=round(rnd.uniform(0.5, FILL_TTL_S) if rnd.random() < 0.4
                                      else rnd.uniform(FILL_TTL_S, FILL_TTL_S + 1.5), 1),
                           h2=round(rnd.uniform(2, 4), 1))
                hot_free = t + ev.length() + 0.5
        elif kind == "etcd":
            if t >= route_free:
                ev = Event("etcd", t, hold=round(rnd.uniform(1.5, 5), 1))
                route_free = t + ev.length() + 2.0
        elif kind == "route":
            if t >= route_free:
                ev = Event("route", t, hold=round(rnd.uniform(1, 4), 1))
                route_free = t + ev.length() + 0.5
        elif t >= node_free:
            if kind == "add" and spares:
                n = rnd.choice(spares)
                ev = Event("add", t, node=n)
                spares.remove(n)
                members.append(n)
            elif kind == "remove" and len(members) > MIN_MEMBERS:
                n = rnd.choice(members)
                ev = Event("remove", t, node=n)
                members.remove(n)
                spares.append(n)
            elif kind == "weight":
                ev = Event("weight", t, node=rnd.choice(members), w=rnd.choice((1, 2, 3)))
            elif kind == "replace" and spares:
                out, new = rnd.choice(members), rnd.choice(spares)
                members[members.index(out)] = new
                spares[spares.index(new)] = out
                ev = Event("replace", t, members="+".join(members))
            elif kind in ("stop", "kill"):
                ev = Event(kind, t, node=rnd.choice(members),
                           hold=round(rnd.uniform(0.8, 3.5), 1))
            elif kind in ("stop2", "kill2"):
                a, b = rnd.sample(members, 2)
                ev = Event(kind, t, node=a, node2=b, hold=round(rnd.uniform(1.5, 3.5), 1))
            elif kind == "standin":
                o, s = rnd.sample(members, 2)
                ev = Event("standin", t, node=o, node2=s, before=round(rnd.uniform(1.2, 2), 1),
                           hold=round(rnd.uniform(1, 2.5), 1), after=round(rnd.uniform(1, 3), 1))
            elif kind == "warmup":
                # Two membership changes within the window: a flip (add, then remove of the
                # same node) or a remove and the node's return.
                if spares and (len(members) <= MIN_MEMBERS or rnd.random() < 0.5):
                    n = rnd.choice(spares)
                    ev = Event("warmup", t, first="add", node=n,
                               gap=round(rnd.uniform(0.5, WARMUP_S), 1))
                else:
                    n = rnd.choice(members)
                    ev = Event("warmup", t, first="remove", node=n,
                               gap=round(rnd.uniform(0.5, WARMUP_S), 1))
            if ev is not None:
                node_free = t + ev.length() + rnd.uniform(1.0, 3.0)
        if ev is not None and t + ev.length() < seconds - 4:
            events.append(ev)
        t += rnd.uniform(0.7, 2.5)
    return events


# ---------------------------------------------------------------- the model

class Write:
    __slots__ = ("key", "ver", "kind", "client", "t_send", "t_end", "status", "reply")

    def __init__(self, key, ver, kind, client, t_send):
        self.key, self.ver, self.kind, self.client = key, ver, kind, client
        self.t_send, self.t_end, self.status, self.reply = t_send, float("inf"), "pending", None

    def row(self, t0):
        end = "-" if self.t_end == float("inf") else "%.3f" % (self.t_end - t0)
        r = self.reply or b""
        if r[:1] == b"\x81":
            r = b"status %d" % int.from_bytes(r[6:8], "big")   # binary: its status
        return "v%d %s by %s sent %.3f end %s %s (%s)" % (
            self.ver, self.kind, self.client, self.t_send - t0, end, self.status,
            r[:40].decode(errors="replace").strip())


class Model:
    """Every write of every key, in version order; judges reads."""

    def __init__(self, t0):
        self.t0 = t0
        self.lock = threading.Lock()
        self.writes = {}   # key -> [Write], index = version - 1
        self.findings = []

    def begin_write(self, key, kind, client):
        with self.lock:
            hist = self.writes.setdefault(key, [])
            w = Write(key, len(hist) + 1, kind, client, now())
            hist.append(w)
            return w

    def end_write(self, w, status, reply):
        t = now()
        with self.lock:
            w.t_end, w.status, w.reply = t, status, reply

    def judge(self, key, value, rs, re, client, op, faults):
        """One hit of `key` with `value`, read between rs and re. None, or the finding."""
        what = None
        try:
            name, _, rest = value.partition(b"=")
            ver = int(rest.split(b";", 1)[0][1:]) if rest.startswith(b"v") else None
        except ValueError:
            name, ver = None, None
        with self.lock:
            hist = self.writes.get(key, [])
            if ver is None:
                what = "a value the model never wrote (%r)" % value[:60]
            elif name != key:
                what = "another key's value: %r holds %s v%d" % (key, name, ver)
            elif not 1 <= ver <= len(hist) or hist[ver - 1].kind != "set":
                what = "a version never written: v%d" % ver
            else:
                w = hist[ver - 1]
                if w.t_send > re:
                    what = "v%d read before it was sent" % ver
                else:
                    for w2 in hist[ver:]:
                        if w2.status == "ack" and w2.t_send > w.t_end and w2.t_end < rs:
                            what = "older version: v%d, but v%d (%s) was acknowledged " \
                                "%.3f s before the read was sent" % (
                                    ver, w2.ver, w2.kind, rs - w2.t_end)
                            break
            if what is None:
                return None
            lo = max(0, (ver or 1) - 4)
            f = {"t": round(rs - self.t0, 3), "client": client, "op": op,
                 "key": key.decode(errors="replace"), "what": what,
                 "read": "sent %.3f replied %.3f" % (rs - self.t0, re - self.t0),
                 "history": [w.row(self.t0) for w in hist[lo:lo + 10]],
                 "faults_active": faults}
            self.findings.append(f)
            return f


def value_of(key, ver, client, rnd):
    """The bytes of version `ver` of `key`: names both; padded to a random length."""
    head = b"%s=v%d;%s;" % (key, ver, client.encode())
    return head + b"x" * rnd.randrange(0, 120)


# ---------------------------------------------------------------- the clients

class Client(threading.Thread):
    """One protocol's client: its own socket, its own seeded stream of operations, one
    request in flight at a time (several clients run at once)."""

    def __init__(self, run, proto, idx, router=None):
        super().__init__(daemon=True, name="client-%s-%d" % (proto, idx))
        self.run_, self.proto = run, proto
        self.router = router or run.sb.router
        self.name_ = proto if router is None else "%s@%s" % (proto, router[0])
        self.rnd = random.Random(run.seed * 1000 + idx)
        self.stop = threading.Event()
        self.counts = {}
        self.inject = run.inject == "stale-writer" and idx == 0

    def count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def key(self):
        r = self.rnd.random()
        i = self.rnd.randrange(HOT_KEYS) if r < 0.3 else self.rnd.randrange(KEYS)
        return self.run_.keys[i]

    def run(self):
        c = h.UdpClient(self.router, ns=self.run_.sb.client_ns, timeout=CLIENT_TIMEOUT)
        try:
            while not self.stop.is_set():
                r = self.rnd.random()
                key = self.key()
                # The hot candidates are read far more than written (as hot keys are), and
                # written by the ASCII client alone (the writes the router copies to
                # replicas): a stale copy on a replica is then read before a write replaces it.
                if key in self.run_.hot_keys and (self.proto != "ascii" or
                                                  self.rnd.random() < 0.9):
                    r = 0.0
                try:
                    if r < 0.40:
                        self.get(c, key)
                    elif r < 0.55 and self.proto == "ascii":
                        self.multiget(c, list(dict.fromkeys(
                            [key] + [self.key() for _ in range(self.rnd.randrange(1, 5))])))
                    elif r < 0.92:
                        self.set(c, key)
                    else:
                        self.delete(c, key)
                except Exception as e:  # noqa: BLE001 - a client bug must not end quietly
                    self.count("client_error")
                    self.run_.client_errors.append("%s: %r" % (self.name_, e))
                time.sleep(0.001)
        finally:
            c.close()

    # -- requests per protocol

    def _request(self, c, payload):
        try:
            return c.request(payload)
        except h.Timeout:
            return None

    def set(self, c, key):
        m = self.run_.model
        w = m.begin_write(key, "set", self.name_)
        ver = w.ver
        if self.inject and ver > 2 and self.rnd.random() < 0.05:
            ver -= 1   # the deliberate bug: a write that names the version before its own
        v = value_of(key, ver, self.name_, self.rnd)
        if self.proto == "ascii":
            exp = self.rnd.choice((0, 0, 0, 300))
            req, ok = b"set %s 0 %d %d\r\n%s\r\n" % (key, exp, len(v), v), (b"STORED\r\n",)
        elif self.proto == "meta":
            req, ok = b"ms %s %d T0\r\n%s\r\n" % (key, len(v), v), (b"HD\r\n",)
        else:
            req, ok = bin_set(key, v, opaque=ver), None
        r = self._request(c, req)
        self.finish_write(w, r, ok)
        self.count("set")

    def delete(self, c, key):
        w = self.run_.model.begin_write(key, "delete", self.name_)
        if self.proto == "ascii":
            req, ok = b"delete %s\r\n" % key, (b"DELETED\r\n", b"NOT_FOUND\r\n")
        elif self.proto == "meta":
            req, ok = b"md %s\r\n" % key, (b"HD\r\n", b"NF\r\n")
        else:
            req, ok = bin_request("delete", key, opaque=w.ver), None
        r = self._request(c, req)
        self.finish_write(w, r, ok)
        self.count("delete")

    def finish_write(self, w, r, ok):
        if r is None:
            status = "lost"
        elif ok is not None:
            status = "ack" if r in ok else "error"
        else:
            try:
                rs = bin_responses(r)
                st = rs[0]["status"] if len(rs) == 1 else -1
            except ValueError:
                st = -1
            # 0: done; 1 (key not found) acknowledges a delete
            status = "ack" if st == 0 or (st == 1 and w.kind == "delete") else "error"
        # an error reply may come after the node applied it (a timeout): maybe applied
        self.run_.model.end_write(w, status, r)
        self.count("write_" + status)

    def get(self, c, key):
        rs = now()
        if self.proto == "ascii":
            r = self._request(c, b"get %s\r\n" % key)
        elif self.proto == "meta":
            r = self._request(c, b"mg %s v\r\n" % key)
        else:
            r = self._request(c, bin_request("getk", key, opaque=7))
        re = now()
        self.count("get")
        if r is None:
            self.count("read_timeout")
            return
        hit = None
        if self.proto == "ascii":
            try:
                items, complete = parse_values(r)
            except ValueError:
                items, complete = None, False
            if items is None or not complete or len(items) > 1:
                return self.odd(key, r, rs, "get")
            if items:
                if items[0][0] != key:
                    return self.foreign(key, items[0][0], rs, re, "get")
                hit = items[0][2]
        elif self.proto == "meta":
            if r == b"EN\r\n":
                pass
            elif r.startswith(b"VA "):
                n = int(r.split(b"\r\n", 1)[0].split()[1])
                hit = r.split(b"\r\n", 1)[1][:n]
            else:
                return self.odd(key, r, rs, "mg")
        else:
            try:
                resp = bin_responses(r)
            except ValueError:
                resp = []
            if len(resp) != 1:
                return self.odd(key, r, rs, "getk")
            if resp[0]["status"] == 0:
                if resp[0]["key"] != key:
                    return self.foreign(key, resp[0]["key"], rs, re, "getk")
                hit = resp[0]["value"]
            elif resp[0]["status"] != 1:
                self.count("read_error")
                return
        if hit is None:
            self.count("miss")
            return
        self.count("hit")
        self.run_.judge(key, hit, rs, re, self.name_, "get")

    def multiget(self, c, keys):
        rs = now()
        try:
            r = c.collect_stream(c.send_stream(b"get " + b" ".join(keys) + b"\r\n",
                                               ascii_complete))
        except h.Timeout:
            self.count("read_timeout")
            return
        re = now()
        self.count("multiget")
        try:
            items, complete = parse_values(r)
        except ValueError:
            items, complete = None, False
        if items is None or not complete:
            return self.odd(keys[0], r, rs, "multiget")
        seen = set()
        for k, _flags, v, _cas in items:
            if k not in keys:
                return self.foreign(keys[0], k, rs, re, "multiget")
            if k in seen:
                return self.odd(k, b"twice in one reply: " + r, rs, "multiget")
            seen.add(k)
            self.run_.judge(k, v, rs, re, self.name_, "multiget")
        self.count("hit")

    def odd(self, key, r, rs, op):
        if r.startswith(b"SERVER_ERROR") or r.startswith(b"ERROR") or r.startswith(b"CLIENT"):
            self.count("read_error")
            return
        self.run_.finding({"t": round(rs - self.run_.t0, 3), "client": self.name_, "op": op,
                           "key": key.decode(errors="replace"),
                           "what": "malformed reply %r" % r[:80]})

    def foreign(self, key, got, rs, re, op):
        self.run_.finding({"t": round(rs - self.run_.t0, 3), "client": self.name_, "op": op,
                           "key": key.decode(errors="replace"),
                           "what": "reply for another key: %r" % got[:60]})


# ---------------------------------------------------------------- the control prober

PROBER = r"""
import json, os, select, socket, sys, threading, time
path, limit, rpid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
tid = threading.get_native_id()
def run_delay(task="/proc/self/task/%d" % tid):
    try:
        with open(task + "/schedstat") as f:
            return int(f.read().split()[1]) / 1e6
    except OSError:
        return 0.0
# the router's control lcore is its main thread (the EAL main lcore): its wait for a CPU
ROUTER = "/proc/%d/task/%d" % (rpid, rpid)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(path)
buf = b""
out = {"probes": 0, "errors": 0, "max_ms": 0.0, "max_router_ms": 0.0, "max_own_ms": 0.0,
       "raw_over": 0, "prober_over": 0, "over": 0, "worst": []}
while True:
    r, _, _ = select.select([sys.stdin], [], [], EVERY)
    if r:
        break
    r0, d0, t0 = run_delay(ROUTER), run_delay(), time.monotonic()
    try:
        s.sendall(b"epoch\n")
        while b"\n" not in buf:
            d = s.recv(4096)
            if not d:
                raise EOFError
            buf += d
    except Exception:
        out["errors"] += 1
        break
    t1, d1, r1 = time.monotonic(), run_delay(), run_delay(ROUTER)
    line, _, buf = buf.partition(b"\n")
    if not line.startswith(b"OK"):
        out["errors"] += 1
    ms = (t1 - t0) * 1000
    router_ms = ms - (d1 - d0)   # the prober's own wait for a CPU is not the router's
    own_ms = router_ms - (r1 - r0)   # nor is the control thread's wait for a CPU (a busy
    out["probes"] += 1               # machine), though it is reported (prober_over)
    out["max_ms"] = max(out["max_ms"], ms)
    out["max_router_ms"] = max(out["max_router_ms"], router_ms)
    out["max_own_ms"] = max(out["max_own_ms"], own_ms)
    if ms > limit:
        out["raw_over"] += 1
    if router_ms > limit:
        out["prober_over"] += 1
    if own_ms > limit:
        out["over"] += 1
    if router_ms > limit:
        out["worst"] = sorted(out["worst"] + [[round(own_ms, 1), round(router_ms, 1),
                                               round(ms, 1), round(t0, 3)]])[-5:]
print(json.dumps(out), flush=True)
""".replace("EVERY", str(PROBE_EVERY_S))


class Prober:
    """A process of its own (its own GIL) sending `epoch` on one control connection every
    PROBE_EVERY_S and timing the round trip; stdin closing ends it."""

    def __init__(self, sock_path, router_pid):
        self.p = subprocess.Popen([sys.executable, "-c", PROBER, sock_path, str(CTL_LIMIT_MS),
                                   str(router_pid)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.t_mono = now()

    def finish(self):
        try:
            out, _ = self.p.communicate(timeout=10)   # closes its stdin: the end
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        try:
            return json.loads(out.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


# ---------------------------------------------------------------- the run

def node_pid(sb, name):
    with open(os.path.join(sb.state, "%s.pid" % name)) as f:
        return int(f.read())


def start_node(sb, name):
    """As scripts/sandbox.sh starts a node: an empty memcached at the same address."""
    i = int(name[4:])
    ip = sb.node_ips[i - 1]
    subprocess.run(["ip", "netns", "exec", sb.env["NODE%d_NS" % i], "memcached", "-d", "-U",
                    sb.env["MC_PORT"], "-p", sb.env["MC_PORT"], "-l", ip, "-u", "root", "-t",
                    "1", "-m", "64", "-c", "1024", "-P",
                    os.path.join(sb.state, "%s.pid" % name)], check=True)
    end = now() + 5
    while now() < end:
        try:
            c = sb.node_tcp(i)
            c.stats()
            c.close()
            return
        except OSError:
            time.sleep(0.05)


class RouterView:
    """Router I's telemetry, shaped like the Sandbox methods the checks call (stats,
    telemetry, nodes_view), for the second router of fleet mode."""

    def __init__(self, sb, r):
        self.tsock = "/var/run/dpdk/%s/dpdk_telemetry.v2" % sb.env["FILE_PREFIX%d" % r]

    def telemetry(self, cmd):
        return h.telemetry(self.tsock, cmd)

    def stats(self):
        return h.flatten_stats(self.telemetry("/ringway/stats"))

    def nodes_view(self):
        return self.telemetry("/ringway/nodes")


class Fleet:
    """Fleet mode: router 2 beside router 1 in the same sandbox, a one-member etcd on
    127.0.0.1 (ports from this pid), a ringway-sync agent per router; membership changes
    through `ringwayctl --etcd`. Everything started here is stopped by its pid."""

    def __init__(self, sb, ringway):
        self.sb, self.ringway = sb, ringway
        self.ctl_bin = h.binary("RINGWAYCTL", "app/ringwayctl/ringwayctl")
        self.sync_bin = h.binary("RINGWAY_SYNC", "app/ringway-sync/ringway-sync")
        base = 24000 + (os.getpid() % 1000) * 4
        self.url = "http://127.0.0.1:%d" % base
        self.peer = "http://127.0.0.1:%d" % (base + 1)
        self.dir = "/tmp/ringway-cc-etcd-%d" % os.getpid()
        self.etcd = None
        self.agents = []
        self.router2_up = False
        self.lock = threading.Lock()

    def sock(self, r):
        return os.path.join(self.sb.state, "control%s.sock" % ("" if r == 1 else r))

    def start_etcd(self):
        os.makedirs(self.dir, exist_ok=True)
        log = open(os.path.join(self.dir, "etcd.log"), "a")
        self.etcd = subprocess.Popen(
            ["etcd", "--name", "cc", "--data-dir", os.path.join(self.dir, "data"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", self.peer, "--initial-advertise-peer-urls", self.peer,
             "--initial-cluster", "cc=" + self.peer, "--initial-cluster-state", "new"],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def kill_etcd(self):
        with self.lock:
            if self.etcd is not None and self.etcd.poll() is None:
                self.etcd.kill()
                self.etcd.wait()
            self.etcd = None

    def put(self, key, value, timeout=1.0):
        import base64
        import urllib.request
        body = json.dumps({"key": base64.b64encode(key.encode()).decode(),
                           "value": base64.b64encode(value.encode()).decode()}).encode()
        req = urllib.request.Request(self.url + "/v3/kv/put", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())

    def etcd_healthy(self, timeout=20.0):
        end = now() + timeout
        while now() < end:
            try:
                self.put("/scratch", "x")
                return True
            except OSError:
                time.sleep(0.2)
        return False

    def start_router2(self):
        text = subprocess.run([h.SANDBOX, "config", "--prefix", self.sb.prefix, "--router", "2",
                               "--request-ms", str(REQUEST_MS), "--members", str(MEMBERS)],
                              check=True, stdout=subprocess.PIPE).stdout.decode()
        conf = os.path.join(self.sb.state, "ringway2.conf")
        with open(conf, "w") as f:
            f.write(text + CONFIG_EXTRA)
        env = dict(os.environ, SANDBOX_PORT="af_packet",
                   SANDBOX_AF_PACKET_ARGS="qpairs=1,framecnt=4096")
        subprocess.run([h.SANDBOX, "router-start", "--prefix", self.sb.prefix, "--router", "2",
                        "--ringway", self.ringway, "--config", conf, "--lcores", "0-1"],
                       check=True, env=env)
        self.router2_up = True

    def start_agents(self):
        for r in (1, 2):
            log = open(os.path.join(self.sb.state, "sync%d.log" % r), "a")
            self.agents.append(subprocess.Popen(
                [self.sync_bin, "--etcd", self.url, "--cluster", CLUSTER, "--name",
                 "router%d" % r, "--socket", self.sock(r), "--ttl", "3", "--timeout", "1000"],
                stdout=log, stderr=subprocess.STDOUT))
            log.close()

    def ctl(self, *args, stdin=None):
        """`ringwayctl --etcd` ARGS: (exit status, output)."""
        try:
            r = subprocess.run([self.ctl_bin, "--etcd", self.url, "--cluster", CLUSTER,
                                "--timeout", "2000"] + list(args), input=stdin,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
        except subprocess.TimeoutExpired:
            return 2, "timeout"
        return r.returncode, r.stdout.decode(errors="replace").strip()

    def fleet_state(self, r):
        try:
            sess = cu.Session(self.sock(r), timeout=2)
            try:
                head, _ = sess.cmd("fleet")
            finally:
                sess.close()
        except OSError:
            return None
        w = head.split()
        return dict(zip(w[1::2], w[2::2])) if head.startswith("OK") else None

    def wait_agree(self, timeout=20.0):
        """Until both routers are fleet-managed on one epoch and digest; their states."""
        end = now() + timeout
        st = []
        while now() < end:
            st = [self.fleet_state(r) for r in (1, 2)]
            if all(x and x.get("fleet") == "managed" for x in st) and \
                    st[0].get("epoch") == st[1].get("epoch") and \
                    st[0].get("digest") == st[1].get("digest"):
                return True, st
            time.sleep(0.2)
        return False, st

    def cleanup(self):
        for p in self.agents:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.agents = []
        self.kill_etcd()
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)


class Run:
    def __init__(self, sb, seed, seconds, events, inject=None, fleet=None):
        self.sb, self.seed, self.seconds, self.events, self.inject = \
            sb, seed, seconds, events, inject
        self.fleet = fleet
        self.keys = [b"cc%d:%d" % (seed, i) for i in range(KEYS)]
        self.hot_keys = set(self.keys[:HOT_KEYS])
        self.t0 = now()
        self.model = Model(self.t0)
        self.extra_findings = []
        self.client_errors = []
        self.fault_log = []   # (t, kind, what, reply)
        self.active = {}      # event spec -> start, while it runs
        self.stopped = set()  # node names SIGSTOPped now (to continue them on any exit)
        self.done = []        # (end, spec) of the faults that ended
        self.lock = threading.Lock()
        self.refused = 0

    def recent(self, t):
        """The faults that ended in the 10 s before t (a cause may have ended already)."""
        return [spec for end, spec in self.done if t - 10 < end <= t]

    def finding(self, f):
        with self.lock:
            f["faults_active"] = sorted(self.active)
            f["faults_ended_10s"] = self.recent(now())
            self.extra_findings.append(f)
        h.log("FINDING %s" % json.dumps(f))

    def judge(self, key, value, rs, re, client, op):
        with self.lock:
            active = sorted(self.active)
            recent = self.recent(rs)
        f = self.model.judge(key, value, rs, re, client, op, active)
        if f is not None:
            f["faults_ended_10s"] = recent
        if f is not None and len(self.model.findings) <= 20:
            h.log("FINDING %s" % json.dumps(f))
        if f is not None and len(self.model.findings) <= 5:
            threading.Thread(target=self.where, args=(key, f), daemon=True).start()

    def where(self, key, f):
        """Which version of `key` each node holds right after a finding (asked directly over
        TCP; a frozen node times out): where the stale copy sits."""
        out = {}
        for i in range(1, NODES + 1):
            try:
                tc = h.TcpClient((self.sb.node_ips[i - 1], int(self.sb.env["MC_PORT"])),
                                 ns=self.sb.client_ns, timeout=0.3)
                try:
                    v = tc.get(key)
                finally:
                    tc.close()
                out["node%d" % i] = None if v is None else v.split(b";", 1)[0].decode(
                    errors="replace")
            except (OSError, RuntimeError) as e:
                out["node%d" % i] = "unreachable (%s)" % type(e).__name__
        f["nodes_now"] = out

    def findings(self):
        return sorted(self.model.findings + self.extra_findings, key=lambda f: f["t"])

    # -- faults

    def ctl(self, sess, line, ev):
        head, _ = sess.cmd(line)
        t = round(now() - self.t0, 3)
        self.fault_log.append((t, ev.kind, line, head))
        if not head.startswith("OK"):
            self.refused += 1
            h.log("  %.3f %s: %s -> %s" % (t, ev.kind, line, head))
        return head

    def member(self, sess, line, ev):
        """A membership change: on router 1's socket, or in fleet mode through etcd (both
        routers' agents apply it)."""
        if self.fleet is None:
            return self.ctl(sess, line, ev)
        words = line.split()
        if words[0] == "replace":
            rc, out = self.fleet.ctl("replace", stdin=line[len("replace "):].replace(
                " ; ", "\n").encode() + b"\n")
        else:
            rc, out = self.fleet.ctl(*words)
        t = round(now() - self.t0, 3)
        self.fault_log.append((t, ev.kind, "etcd: " + line, out))
        if rc != 0:
            self.refused += 1
            h.log("  %.3f %s: etcd %s -> %s" % (t, ev.kind, line, out))
        return out

    def addr(self, name):
        return "%s:%s" % (self.sb.node_ips[int(name[4:]) - 1], self.sb.env["MC_PORT"])

    def stop_node(self, name):
        h.freeze(node_pid(self.sb, name))
        self.stopped.add(name)

    def cont_node(self, name):
        os.kill(node_pid(self.sb, name), signal.SIGCONT)
        self.stopped.discard(name)

    def kill_node(self, name):
        os.kill(node_pid(self.sb, name), signal.SIGKILL)

    def note(self, ev, what):
        self.fault_log.append((round(now() - self.t0, 3), ev.kind, what, ""))

    def run_event(self, ev):
        a = ev.args
        sess = cu.Session(cu.socket_path(self.sb))
        spec = ev.spec()
        with self.lock:
            self.active[spec] = now()
        try:
            k = ev.kind
            if k == "add":
                self.member(sess, "add %s %s" % (a["node"], self.addr(a["node"])), ev)
            elif k == "remove":
                self.member(sess, "remove %s" % a["node"], ev)
            elif k == "weight":
                self.member(sess, "weight %s %d" % (a["node"], a["w"]), ev)
            elif k == "replace":
                ms = str(a["members"]).split("+")
                self.member(sess, "replace " + " ; ".join("%s %s" % (m, self.addr(m))
                                                        for m in ms), ev)
            elif k in ("stop", "kill"):
                self.fail(ev, a["node"], k)
                time.sleep(a["hold"])
                self.recover(ev, a["node"], k)
            elif k in ("stop2", "kill2"):
                kk = k[:-1]
                self.fail(ev, a["node"], kk)
                time.sleep(1.0)
                self.fail(ev, a["node2"], kk)
                time.sleep(a["hold"] - 1.0 if a["hold"] > 1.0 else 0)
                self.recover(ev, a["node"], kk)
                time.sleep(1.0)
                self.recover(ev, a["node2"], kk)
            elif k == "standin":
                # The owner goes, its keys are written on stand-ins; a stand-in goes too and
                # comes back while the owner is still down; then the owner comes back.
                self.fail(ev, a["node"], "stop")
                time.sleep(a["before"])
                self.fail(ev, a["node2"], "stop")
                time.sleep(a["hold"])
                self.recover(ev, a["node2"], "stop")
                time.sleep(a["after"])
                self.recover(ev, a["node"], "stop")
            elif k == "hot":
                # an operator pins a key on every router of a fleet (one after the other)
                keys = [self.keys[int(i)] for i in str(a["keys"]).split("+")]
                others = [] if self.fleet is None else [cu.Session(self.fleet.sock(2))]
                try:
                    for phase, hold in (("add", a["h1"]), ("remove", a["cool"]),
                                        ("add", a["h2"]), ("remove", 0)):
                        for se in [sess] + others:
                            for key in keys:
                                self.ctl(se, "hot %s %s" % (phase, key.decode()), ev)
                        time.sleep(hold)
                finally:
                    for se in others:
                        se.close()
            elif k == "warmup":
                n = a["node"]
                first = "add %s %s" % (n, self.addr(n)) if a["first"] == "add" else \
                    "remove %s" % n
                second = "remove %s" % n if a["first"] == "add" else \
                    "add %s %s" % (n, self.addr(n))
                self.member(sess, first, ev)
                time.sleep(a["gap"])
                self.member(sess, second, ev)
            elif k == "etcd":
                if self.fleet is None:
                    self.note(ev, "no etcd (one router): nothing done")
                else:
                    self.fleet.kill_etcd()
                    self.note(ev, "etcd SIGKILL")
                    time.sleep(a["hold"])
                    self.fleet.start_etcd()
                    self.note(ev, "etcd restarted (healthy: %s)" % self.fleet.etcd_healthy(10))
            elif k == "route":
                self.ctl(sess, "route add 198.18.1.0/24 direct", ev)
                time.sleep(a["hold"])
                self.ctl(sess, "route remove 198.18.1.0/24", ev)
        except Exception as e:  # noqa: BLE001
            self.fault_log.append((round(now() - self.t0, 3), ev.kind, "exception", repr(e)))
            h.log("fault %s: %r" % (spec, e))
        finally:
            sess.close()
            with self.lock:
                self.active.pop(spec, None)
                self.done.append((now(), spec))

    def fail(self, ev, name, how):
        (self.stop_node if how == "stop" else self.kill_node)(name)
        self.note(ev, "%s %s" % ("SIGSTOP" if how == "stop" else "SIGKILL", name))

    def recover(self, ev, name, how):
        if how == "stop":
            self.cont_node(name)
            self.note(ev, "SIGCONT %s" % name)
        else:
            start_node(self.sb, name)
            self.note(ev, "restarted %s" % name)

    def continue_all(self):
        for name in list(self.stopped):
            try:
                self.cont_node(name)
            except OSError:
                pass


def health_all_up(sb, timeout):
    end = now() + timeout
    view = []
    while now() < end:
        try:
            view = h.nodes_list(sb.nodes_view())
        except (OSError, ValueError):
            view = []
        if view and all(str(n.get("health", "up")).startswith("up") for n in view):
            return True, view
        time.sleep(0.2)
    return False, view


def gauges(sb):
    s = sb.stats()
    tel = cu.control_tel(sb)
    heap = cu.heap_alloc(sb)
    return {"mbufs_in_use": tel.get("mbufs_in_use"), "slots_live": s.get("slots_live"),
            "multiget_live": s.get("multiget_live"), "multiget_bytes": s.get("multiget_bytes"),
            "dirty_keys_bytes": s.get("dirty_keys_bytes"), "warmup_open": s.get("warmup_open"),
            "warmup_bytes": s.get("warmup_bytes"), "heap_bytes": heap[0], "heap_allocs": heap[1]}


def idle_ok(g, base):
    """Idle gauges equal the baseline's; the heap may end below it (a node's health state
    freed when its endpoint was reset is one allocation fewer), never above (a leak)."""
    heap = ("heap_bytes", "heap_allocs")
    return all(g[k] == base[k] for k in base if k not in heap) and \
        all(g[k] <= base[k] for k in heap)


def prime(sb, sess, keys):
    """Everything the faults allocate once, done once before the baseline: spare nodes'
    endpoints, a warm-up window, a hot set, a route table."""
    for i in range(MEMBERS + 1, NODES + 1):
        sess.cmd("add node%d %s:%s" % (i, sb.node_ips[i - 1], sb.env["MC_PORT"]))
    for i in range(MEMBERS + 1, NODES + 1):
        sess.cmd("remove node%d" % i)
    sess.cmd("hot add %s" % keys[0].decode())
    sess.cmd("hot remove %s" % keys[0].decode())
    sess.cmd("route add 198.18.1.0/24 direct")
    sess.cmd("route remove 198.18.1.0/24")
    sess.cmd("warmup end")
    # The placements the last FLIP_HELD changes replaced are held for writes (membership
    # flips): the same chain here and at the idle check, so the held placements and
    # warmup_bytes / heap compare alike.
    normalize(sb, sess)


# lib/dataplane/dataplane_priv.h DP_FLIP_HELD: placements held after the changes that replaced
# them.
FLIP_HELD = 4


def normalize(sb, sess):
    """The initial ring, with the FLIP_HELD held before it the initial ring plus one spare and
    plus the other, alternating, whatever the membership was: FLIP_HELD + 1 alternating steps,
    so that if the first moves nothing (the membership was that already) the chain is the same."""
    def plus(i):
        return initial_membership(sb) + " ; node%d %s:%s" % (i, sb.node_ips[i - 1],
                                                            sb.env["MC_PORT"])
    for i in range(FLIP_HELD + 1):
        sess.cmd(plus(NODES - 1 + i % 2))
    sess.cmd(initial_membership(sb))


def initial_membership(sb):
    return "replace " + " ; ".join("node%d %s:%s" % (i, sb.node_ips[i - 1], sb.env["MC_PORT"])
                                   for i in range(1, MEMBERS + 1))


def shrink(findings, events, seconds):
    """The faults that ran in the 15 s before the first finding, re-timed from 2 s: the
    shortest schedule likely to show it again (the seed keeps the clients' streams)."""
    if not findings:
        return None
    tf = findings[0]["t"]
    near = [e for e in events if e.t <= tf and e.t + e.length() >= tf - 15]
    if not near:
        return {"schedule": "", "seconds": min(seconds, int(tf) + 8)}
    shift = near[0].t - 2.0
    out = [Event(e.kind, e.t - shift, **e.args) for e in near]
    return {"schedule": schedule_spec(out),
            "seconds": max(20, min(seconds, int(tf - shift + TAIL_S + 4)))}


def replay_cmd(seed, seconds, faults=None, schedule=None, inject=None, routers=1):
    argv = ["tests/e2e/test_consistency.py", "--seed", str(seed), "--seconds", str(seconds)]
    if routers != 1:
        argv += ["--routers", str(routers)]
    if schedule is not None:
        argv += ["--schedule", "'%s'" % schedule]
    elif faults is not None:
        argv += ["--faults", ",".join(faults)]
    if inject:
        argv += ["--inject", inject]
    return "sudo RINGWAY=build/app/ringway/ringway " + " ".join(argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=int(os.environ.get(
        "RINGWAY_CONSISTENCY_SEED", DEFAULT_SEED)))
    ap.add_argument("--seconds", type=int, default=int(os.environ.get(
        "RINGWAY_CONSISTENCY_SECONDS", 90)))
    ap.add_argument("--faults", default=os.environ.get("RINGWAY_CONSISTENCY_FAULTS",
                                                       ",".join(DEFAULT_FAULTS)),
                    help="comma-separated fault kinds to draw from (all: %s)" % ",".join(KINDS))
    ap.add_argument("--routers", type=int, choices=(1, 2), default=int(os.environ.get(
        "RINGWAY_CONSISTENCY_ROUTERS", 1)),
                    help="2: fleet mode (two routers, etcd, ringway-sync agents)")
    ap.add_argument("--schedule", help="an explicit schedule (a replay): KIND@T[:k=v,...];...")
    ap.add_argument("--clients", default="ascii,meta,binary")
    ap.add_argument("--json-out", help="write the run's report here (scripts/soak.sh)")
    ap.add_argument("--inject", choices=("stale-writer",),
                    help="break the client on purpose: show that the checker fails")
    ap.add_argument("--list-kinds", action="store_true")
    ap.add_argument("--print-schedule", action="store_true",
                    help="print the seed's schedule and exit (no sandbox)")
    a = ap.parse_args()
    if a.list_kinds:
        print(",".join(KINDS))
        return 0
    faults = [k for k in a.faults.split(",") if k] if a.faults not in ("", "none") else []
    bad = [k for k in faults if k not in KINDS]
    if bad:
        ap.error("unknown fault kind(s) %s; kinds: %s" % (",".join(bad), ",".join(KINDS)))
    if a.routers == 1:
        faults = [k for k in faults if k not in FLEET_ONLY]
    events = parse_schedule(a.schedule) if a.schedule is not None else \
        make_schedule(a.seed, a.seconds, faults)
    h.log("consistency: seed %d, %d s, %d router(s), faults %s, %d events" % (
        a.seed, a.seconds, a.routers,
        "schedule" if a.schedule is not None else ",".join(faults) or "none", len(events)))
    h.log("schedule: %s" % (schedule_spec(events) or "(none)"))
    if a.print_schedule:
        return 0
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e consistency seed %d" % a.seed)
    wall0 = now()
    fleet_mode = a.routers == 2
    if fleet_mode and subprocess.run(["sh", "-c", "command -v etcd"],
                                     stdout=subprocess.DEVNULL).returncode != 0:
        h.log("SKIP: etcd not installed (scripts/setup-deps.sh)")
        return h.SKIP
    sb = h.Sandbox("cc", nodes=NODES, no_huge=fleet_mode, routers=a.routers)
    st_ = {"run": None, "probers": [], "fleet": None}

    def cleanup():
        if st_["run"] is not None:
            st_["run"].continue_all()
        for p in st_["probers"]:
            p.kill()
        if st_["fleet"] is not None:
            st_["fleet"].cleanup()

    def on_signal(signum, frame):
        cleanup()
        sb._on_signal(signum, frame)

    import atexit
    atexit.register(cleanup)   # runs before the sandbox's own (registered earlier)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)

    keys = [b"cc%d:%d" % (a.seed, i) for i in range(KEYS)]
    cu.start(sb, ringway, MEMBERS, extra=CONFIG_EXTRA)
    t.ok(cu.wait_resolved(sb, MEMBERS), "router serves its %d members" % MEMBERS)
    views = [sb]
    socks = [cu.socket_path(sb)]
    addrs = [sb.router]
    fleet = None
    if fleet_mode:
        fleet = st_["fleet"] = Fleet(sb, ringway)
        fleet.start_router2()
        views.append(RouterView(sb, 2))
        socks.append(fleet.sock(2))
        addrs.append((sb.env["ROUTER2_IP"], int(sb.env["MC_PORT"])))
        fleet.start_etcd()
        t.ok(fleet.etcd_healthy(), "etcd up on %s" % fleet.url)
        for _ in range(10):   # the fleet's revisions start above the routers' epochs
            fleet.put("/scratch", "x")
    for sock in socks:
        sess = cu.Session(sock)
        prime(sb, sess, keys)
        sess.close()
    if fleet_mode:
        sess = cu.Session(socks[0])
        sess.cmd("weight node1 1")   # writes router 1's state file: the first membership
        sess.close()
        rc, out = fleet.ctl("init", os.path.join(sb.state, "state"))
        t.ok(rc == 0, "ringwayctl --etcd init: %s" % out)
        fleet.start_agents()
        ok, fst = fleet.wait_agree()
        t.ok(ok, "both routers fleet-managed on one epoch and digest (%s)" % fst)
        c2 = h.UdpClient(addrs[1], ns=sb.client_ns, timeout=0.3)
        end = now() + 10
        while now() < end:
            try:
                c2.request(b"get warmup\r\n")
                break
            except h.Timeout:
                time.sleep(0.1)
        c2.close()
    time.sleep(FILL_TTL_S + 1.0)   # the primed hot key cools down and leaves the set
    base = [h.settled_stats(v) for v in views]
    base_g = [gauges(v) for v in views]
    h.log("baseline: %s (setup %.1f s)" % (base_g, now() - wall0))

    run = st_["run"] = Run(sb, a.seed, a.seconds, events, a.inject, fleet)
    pids = []
    for r in range(1, len(socks) + 1):
        with open(os.path.join(sb.state, "router%s.pid" % ("" if r == 1 else r))) as f:
            pids.append(int(f.read()))
    probers = st_["probers"] = [Prober(sock, pid) for sock, pid in zip(socks, pids)]
    protos = a.clients.split(",")
    if fleet_mode:   # each protocol on both routers: a write through one, reads through both
        clients = [Client(run, p, i, addrs[i % 2]) for i, p in enumerate(protos + protos)]
    else:
        clients = [Client(run, p, i) for i, p in enumerate(protos)]
    for c in clients:
        c.start()
    threads = []
    for ev in events:
        while now() < run.t0 + ev.t:
            time.sleep(min(0.05, run.t0 + ev.t - now()))
        th = threading.Thread(target=run.run_event, args=(ev,), daemon=True)
        th.start()
        threads.append(th)
    for th in threads:
        th.join(timeout=max(1.0, run.t0 + a.seconds - now()) + 15)
    while now() < run.t0 + a.seconds:
        time.sleep(0.1)
    for c in clients:
        c.stop.set()
    for c in clients:
        c.join(timeout=5)
    run.continue_all()
    ctl_res = [p.finish() for p in probers]
    for cr in ctl_res:   # the worst round trips' times, as the fault log's (same clock)
        if cr:
            cr["worst"] = [[own, ms, raw, round(t_ - run.t0, 3)]
                           for own, ms, raw, t_ in cr["worst"]]
    t_run = now() - run.t0

    # ---- quiesce: every node up, then a final read of every key through every router:
    # after every fault, only the latest write (or a miss)
    for i, v in enumerate(views):
        up, view = health_all_up(v, 15)
        t.ok(up, "router %d: every node healthy after the faults (%s)" % (i + 1, [
            (n.get("name"), n.get("health")) for n in view]))
    if fleet_mode:
        if fleet.etcd is None:
            fleet.start_etcd()
        ok, fst = fleet.wait_agree()
        t.ok(ok, "after the faults both routers on one epoch and digest (%s)" % fst)
    final_hits = 0
    for i, addr in enumerate(addrs):
        c = h.UdpClient(addr, ns=sb.client_ns, timeout=CLIENT_TIMEOUT)
        for k in keys:
            rs = now()
            try:
                r = c.request(b"get %s\r\n" % k)
            except h.Timeout:
                continue
            items = parse_values(r)[0] if r.startswith(b"VALUE") else []
            if items:
                final_hits += 1
                run.judge(k, items[0][2], rs, now(), "final@r%d" % (i + 1), "get")
        c.close()
    # Back to the start for the idle check: the initial membership, no window, no hot set.
    if fleet_mode:
        rc, out = fleet.ctl("replace", stdin=initial_membership(sb)[len("replace "):].replace(
            " ; ", "\n").encode() + b"\n")
        t.ok(rc == 0, "the initial membership back through etcd: %s" % out)
        fleet.wait_agree()
    for sock in socks:
        sess = cu.Session(sock)
        if not fleet_mode:
            normalize(sb, sess)
        sess.cmd("warmup end")
        sess.close()
    time.sleep(FILL_TTL_S + 1.0)   # hot keys left cool down and leave the set

    end = now() + 15
    g = [gauges(v) for v in views]
    while now() < end and not all(idle_ok(x, y) for x, y in zip(g, base_g)):
        time.sleep(0.3)
        g = [gauges(v) for v in views]
    ident = [h.identity(h.settled_stats(v)) for v in views]

    findings = run.findings()
    ops = {}
    for cl in clients:
        for k, v in cl.counts.items():
            ops[k] = ops.get(k, 0) + v
    by_kind = {}
    for ev in events:
        by_kind[ev.kind] = by_kind.get(ev.kind, 0) + 1
    n_ops = sum(ops.get(k, 0) for k in ("get", "multiget", "set", "delete"))
    h.log("operations: %s" % json.dumps(ops, sort_keys=True))
    h.log("faults: %s (%d control commands refused)" % (json.dumps(by_kind, sort_keys=True),
                                                         run.refused))
    h.log("control socket: %s" % json.dumps(ctl_res))
    h.log("final read: %d hits of %d keys x %d router(s)" % (final_hits, len(keys), len(addrs)))
    for i, v in enumerate(views):
        d = h.delta(base[i], h.settled_stats(v))
        h.log("router %d: %s; drops %s" % (i + 1, json.dumps({k: d[k] for k in (
            "rx", "forwarded", "returned", "answered", "dropped", "probe_replies",
            "warm_absorbed", "failover_next", "hot_fills", "hot_invalidations", "warm_fills")
            if k in d}, sort_keys=True), json.dumps(d["drops"], sort_keys=True)))

    t.ok(n_ops > 200 * a.seconds // 90, "the clients did work (%d operations)" % n_ops)
    t.eq(run.client_errors[:3], [], "no client raised")
    t.ok(sb.router_alive(), "router alive")
    for f in findings[:10]:
        t.ok(False, "finding at %.3f s: %s %s %s: %s" % (f["t"], f["client"], f["op"],
                                                         f["key"], f["what"]))
    t.eq(len(findings), 0, "findings (replies the model forbids)")
    for i, cr in enumerate(ctl_res):
        t.ok(cr is not None and cr["errors"] == 0 and cr["probes"] > 0,
             "router %d: control prober ran (%s)" % (i + 1, cr and cr["probes"]))
        t.eq(cr and cr["over"], 0,
             "router %d: control socket round trips over %d ms, the prober's and the "
             "control thread's waits for a CPU discounted (raw: %s over, max %.1f ms; "
             "prober's wait discounted: %s over, max %.1f ms; both: max %.1f ms)" % (
                 i + 1, CTL_LIMIT_MS, cr and cr["raw_over"], cr and cr["max_ms"] or 0,
                 cr and cr["prober_over"], cr and cr["max_router_ms"] or 0,
                 cr and cr["max_own_ms"] or 0))
        if cr and cr["over"]:
            findings.append({"t": round(t_run, 3), "client": "prober", "op": "epoch",
                             "key": "-", "what": "router %d: control socket over %d ms: %s"
                             % (i + 1, CTL_LIMIT_MS, cr["worst"])})
    for i, (holds, text) in enumerate(ident):
        t.ok(holds, "router %d: packet accounting identity: %s" % (i + 1, text))
        if not holds:
            findings.append({"t": round(t_run, 3), "client": "-", "op": "identity",
                             "key": "-", "what": "router %d: %s" % (i + 1, text)})
    for i in range(len(views)):
        t.ok(idle_ok(g[i], base_g[i]), "router %d: mbufs, slots, multi-gets, warm-up, dirty "
             "keys back to the baseline and heap not above it when idle (got %r, baseline %r)"
             % (i + 1, g[i], base_g[i]))
        if not idle_ok(g[i], base_g[i]):
            findings.append({"t": round(t_run, 3), "client": "-", "op": "idle", "key": "-",
                             "what": "router %d not back to baseline: %s vs %s"
                             % (i + 1, g[i], base_g[i])})

    replay = shr = None
    if findings:
        replay = replay_cmd(a.seed, a.seconds, faults=None if a.schedule else faults,
                            schedule=a.schedule, inject=a.inject, routers=a.routers)
        sh = shrink(findings, events, a.seconds)
        shr = sh and replay_cmd(a.seed, sh["seconds"], schedule=sh["schedule"],
                                inject=a.inject, routers=a.routers)
        h.log("FAILED: seed %d, %d finding(s); the first:" % (a.seed, len(findings)))
        h.log(json.dumps(findings[0], indent=1))
        h.log("replay: %s" % replay)
        if shr:
            h.log("shrunk replay (the faults near the first finding): %s" % shr)
    else:
        h.log("seed %d: no finding (%d operations, %d faults)" % (a.seed, n_ops, len(events)))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"seed": a.seed, "seconds": a.seconds, "routers": a.routers,
                       "run_s": round(t_run, 1), "wall_s": round(now() - wall0, 1),
                       "faults_enabled": faults, "schedule": schedule_spec(events),
                       "operations": ops, "faults": by_kind, "fault_log": run.fault_log,
                       "refused": run.refused, "control": ctl_res,
                       "identity": [{"holds": x, "text": y} for x, y in ident],
                       "idle": {"baseline": base_g, "end": g}, "findings": findings,
                       "replay": replay, "replay_shrunk": shr, "checks_failed": t.failures},
                      f, indent=1)
    h.log("wall time %.1f s before teardown" % (now() - wall0))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
