#!/usr/bin/env python3
"""e2e: warm-up routing on a live add (issue 14): the GET hit ratio through `ringwayctl add`.

The sandbox has MEMBERS + 1 memcached nodes; the router starts with node1..MEMBERS (the last
node is the spare) and one worker. The same experiment runs twice, from flushed nodes and a
fresh router: warm-up off ([warmup] window_s = 0), then on (window_s = 30).

1. ringway-loadgen (client namespace, af_packet on the client's veth) preloads NKEYS keys
   through the router, so every key is warm on its owner, then GETs them (uniform) at RATE/s;
   its run.series holds the hit ratio per 100 ms of send time. Verification keys with a value
   of their own are set through the router too.
2. ADD_AT seconds into the run: `ringwayctl add` the spare. Then, still in the window: a moved
   verification key is written through the router and read back (the new value: the warm path
   never overwrites a write), and every verification key is read through the router: the
   byte-exact value or (warm-up off, moved keys only) a miss, never another value.
3. The dip, from per-request outcomes (GET hits and misses by send time), so that a loaded
   machine cannot fake it: steady level (hits / gets of the buckets before the add) minus,
   off, the hit ratio of all GETs sent after the add: about the moved fraction (`ringwayctl
   plan add`); on, the lowest bucket after it among the buckets holding at least half the
   GETs the rate puts in one (a bucket the load generator was descheduled in holds a handful,
   and one miss there is not a dip): below 0.5 points. Then the spare itself (TCP) holds the moved keys read in the window with their
   exact values when warm-up is on (filled with `add`), none when off; the written keys have
   their new value there and none at their previous owner. The accounting identity (with its
   warm_absorbed term) holds; the warm counters moved (on) or stayed 0 (off).

Environment: RINGWAY, RINGWAYCTL, RINGWAY_LOADGEN (meson passes them), E2E_WARMUP_MEMBERS
(default 4: 4 -> 5; 10 gives 10 -> 11), E2E_WARMUP_KEYS (default 20000), E2E_WARMUP_RATE
(default 5000), E2E_WARMUP_OUT (a JSON file for the two runs' figures and curves).
"""
import json
import os
import subprocess
import sys
import threading
import time

import control_util as cu
import harness as h
from mcudp import bin_request, bin_responses

MEMBERS = int(os.environ.get("E2E_WARMUP_MEMBERS", "4"))
NKEYS = int(os.environ.get("E2E_WARMUP_KEYS", "20000"))
RATE = int(os.environ.get("E2E_WARMUP_RATE", "5000"))
OUT = os.environ.get("E2E_WARMUP_OUT")
DURATION = 9.0
ADD_AT = 3.0
WINDOW_S = 30
NVERIFY = 2000
LG_SRC = "198.18.0.20"
TARGET_PP = 0.5


def vval(k, gen=b"v"):
    """The value of verification key k: its own bytes, so a value of another key shows."""
    return gen + b":" + k + b":" + (b"%08x" % (hash(k) & 0xffffffff))


class Loadgen:
    """ringway-loadgen in the background: --preload, then a GET-only run; progress lines on
    stderr are read by a thread so the test knows when the run begins."""

    def __init__(self, sb, tag):
        self.prefix = "%s-lg%s" % (sb.prefix, tag)
        self.json = os.path.join(sb.state, "lg-%s.json" % tag)
        exe = h.binary("RINGWAY_LOADGEN", "app/ringway-loadgen/ringway-loadgen")
        args = ["ip", "netns", "exec", sb.client_ns, exe, "--no-huge", "-m", "256",
                "--no-pci", "--no-shconf", "--file-prefix", self.prefix, "--vdev",
                "net_af_packet0,iface=%s,framecnt=4096" % sb.env["CLIENT_IF"], "--",
                "--src", LG_SRC, "--dst", "%s:%d" % sb.router, "--arp", "--idle-us", "20",
                "--keys", str(NKEYS), "--key-prefix", "wl:", "--value-size", "100",
                "--get-ratio", "1", "--dist", "uniform", "--preload", "--rate", str(RATE),
                "--duration", str(DURATION), "--json", self.json]
        h.log("$ " + " ".join(args) + " &")
        self.p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.lines = []
        self.run_seen = threading.Event()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for raw in self.p.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            if line.startswith("loadgen run"):
                self.run_seen.set()

    def result(self):
        try:
            self.p.wait(timeout=DURATION + 120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.t.join(timeout=5)
        h.remove_dpdk_runtime(self.prefix)
        for line in self.lines:
            if line.startswith("loadgen run") or "preload" in line:
                h.log("  " + line)
        try:
            with open(self.json) as f:
                return self.p.returncode, json.load(f)
        except (OSError, ValueError):
            return self.p.returncode, None


def quiet_reads(sb, keys):
    """Each key read through the router the quiet way, as its own request: binary GETKQ + NOOP
    for the even ones, `mg KEY v k q` + `mn` for the odd ones. {key: value or None}."""
    c = sb.client(timeout=2.0)
    out = {}
    try:
        for i, k in enumerate(keys):
            if i % 2 == 0:
                rid = c.send_stream(bin_request(0x0d, k, opaque=1) + bin_request(0x0a, opaque=2),
                                    lambda b: any(r["opcode"] == 0x0a
                                                  for r in bin_responses(b)))
                rs = bin_responses(c.collect_stream(rid))
                hits = [r["value"] for r in rs if r["opcode"] == 0x0d and r["status"] == 0]
            else:
                rid = c.send_stream(b"mg %s v k q\r\nmn\r\n" % k,
                                    lambda b: b.endswith(b"MN\r\n"))
                data = c.collect_stream(rid)
                hits = []
                if data.startswith(b"VA "):
                    head, rest = data.split(b"\r\n", 1)
                    hits = [rest[:int(head.split()[1])]]
            out[k] = hits[0] if hits else None
    finally:
        c.close()
    return out


def flush_nodes(sb):
    for i in range(1, sb.nodes + 1):
        t = sb.node_tcp(i)
        try:
            t.sock.sendall(b"flush_all\r\n")
            if t.line() != b"OK":
                raise RuntimeError("flush_all on node%d" % i)
        finally:
            t.close()


def read_through_router(sb, keys):
    got, bad = cu.get_all(sb, keys)
    return got, bad


def dip(series, add_unix, rate):
    """(steady level, lowest after the add, its bucket, dip in points, add bucket) from a
    loadgen run.series, by requests, not wall-clock buckets alone: the steady level is hits /
    gets over the buckets before the add (the first, the run's ramp, left out); the lowest
    bucket after it is taken among those holding at least half the GETs `rate` puts in one."""
    iv = series["interval_ms"] / 1000.0
    at = int((add_unix - series["start_unix"]) / iv)
    hits, misses = series["hits"], series["misses"]
    full = rate * iv / 2
    hb = sum(hits[1:at])
    gb = hb + sum(misses[1:at])
    after = [(hits[i] / (hits[i] + misses[i]), i) for i in range(at, len(hits))
             if hits[i] + misses[i] >= full]
    if gb == 0 or not after:
        return None, None, None, None, at
    steady = hb / gb
    low, low_at = min(after)
    return steady, low, low_at, 100.0 * (steady - low), at


def run_mode(t, sb, ringway, ctl, window_s, plan_bin):
    mode = "warm-up on" if window_s else "warm-up off"
    spare = MEMBERS + 1
    spare_addr = "%s:11211" % sb.node_ips[spare - 1]
    flush_nodes(sb)
    try:
        os.remove(cu.state_path(sb))  # the last run's add is not this run's start
    except FileNotFoundError:
        pass
    # Health pinned: on a loaded machine requests time out, and a node marked down by them
    # would fail over, its keys missing on a stand-in; that is failover, not warm-up, and
    # would fake a dip (seen: steady 0.94 before any add). The test measures warm-up only.
    extra = ("\n[warmup]\nwindow_s = %d\nttl_s = 300\n"
             "\n[health]\nfail_down = 1000\nprobe_timeout_ms = 10000\n" % window_s)
    cu.start(sb, ringway, MEMBERS, extra=extra)
    end = time.monotonic() + 10
    while time.monotonic() < end:  # telemetry answers once the router is up
        try:
            if isinstance(sb.nodes_view().get("/ringway/nodes"), dict):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    t.ok(cu.wait_resolved(sb, MEMBERS), "%s: router serves node1..%d" % (mode, MEMBERS))
    rc, o = ctl.json("warmup")
    h.log("%s: ringwayctl warmup: %r" % (mode, o))

    vkeys = [b"wv:%d" % i for i in range(NVERIFY)]
    failed = cu.set_all(sb, vkeys, vval)
    t.eq(failed[:5], [], "%s: %d verification keys STORED through the router" % (mode, NVERIFY))
    own0 = cu.single_owner(t, cu.owners(sb, vkeys, vval), "%s: before the add" % mode)
    want = h.plan_assign(plan_bin, cu.nodes_file(
        sb, ["node%d" % i for i in range(1, spare + 1)],
        os.path.join(sb.state, "nodes%d" % spare)), "ring", vkeys)
    moved = [k for k in vkeys if want[k] != "node%d" % own0[k]]
    t.ok(moved and all(want[k] == "node%d" % spare for k in moved),
         "%s: %d of %d verification keys will move, all to node%d" %
         (mode, len(moved), NVERIFY, spare))
    written = moved[:20]
    quiet = moved[20:60]
    read_in_window = moved[60:]
    s0 = h.settled_stats(sb)

    lg = Loadgen(sb, "on" if window_s else "off")
    if not t.ok(lg.run_seen.wait(timeout=NKEYS / RATE * 3 + 30),
                "%s: the load generator preloaded and runs" % mode):
        lg.result()
        return None
    time.sleep(ADD_AT - 1.0)  # the first progress line of the run comes 1 s in
    _, plan = ctl.json("plan", "add", "node%d" % spare, spare_addr)
    planned = plan.get("moved")
    t_add = time.time()
    rc, o = ctl.json("add", "node%d" % spare, spare_addr)
    t.ok(rc == 0 and o.get("epoch") == 2, "%s: ringwayctl add node%d under load: OK epoch 2"
         % (mode, spare))
    # In the window, under the load: a write of a moved key wins over the warm path ...
    wfail = cu.set_all(sb, written, lambda k: vval(k, b"w"))
    got_w, bad_w = read_through_router(sb, written)
    t.eq(wfail[:3] + bad_w[:3], [], "%s: writes of %d moved keys in the window answered"
         % (mode, len(written)))
    t.eq([k for k in written if got_w.get(k) != vval(k, b"w")][:5], [],
         "%s: a moved key written in the window reads back its new value" % mode)
    # Quiet reads (binary GETKQ + NOOP, meta mg q + mn) of moved keys: warmed too.
    try:
        gq = quiet_reads(sb, quiet)
    except h.Timeout as e:
        gq = {}
        t.ok(False, "%s: quiet reads answered (%s)" % (mode, e))
    t.eq([k for k in quiet if gq.get(k, b"?") not in (None, vval(k))][:5], [],
         "%s: quiet reads of moved keys: the key's own value or a miss" % (mode))
    qhit = [k for k in quiet if gq.get(k) == vval(k)]
    t.eq(len(qhit), len(quiet) if window_s else 0, "%s: quiet reads of %d moved keys that hit "
         "(binary GETKQ + NOOP and mg q + mn)" % (mode, len(quiet)))
    # ... and every verification key reads back exactly (or, off, a moved one misses).
    got, bad = read_through_router(sb, vkeys)
    t.eq(bad[:5], [], "%s: every read of a verification key answered" % mode)
    wrong = [k for k in vkeys if got.get(k) is not None and
             got[k] != (vval(k, b"w") if k in written else vval(k))]
    t.eq(wrong[:5], [], "%s: no read returned another value than the key's own" % mode)
    missed = [k for k in vkeys if k in got and got[k] is None]
    if window_s:
        t.eq(missed[:5], [], "%s: no verification key missed (%d moved ones were asked of "
             "their previous owner)" % (mode, len(read_in_window)))
    else:
        t.eq(sorted(missed), sorted(read_in_window + quiet),
             "%s: exactly the moved keys miss (%d)" % (mode, len(read_in_window + quiet)))
    if window_s:
        rc, o = ctl.json("warmup")
        t.ok(rc == 0 and "open" in json.dumps(o), "%s: the window is open after the add (%r)"
             % (mode, o))

    rc, rep = lg.result()
    t.ok(rc == 0 and rep is not None, "%s: the load generator exits 0 with its report" % mode)
    if rep is None:
        return None
    run = rep["run"]
    t.eq(rep.get("preload_keys_missing"), 0, "%s: every loadgen key preloaded" % mode)
    t.eq(run["value_size_mismatch"], 0, "%s: every loadgen hit had its 100-byte value" % mode)
    steady, low, low_at, dip_pp, at = dip(run["series"], t_add, RATE)
    if not t.ok(dip_pp is not None, "%s: series covers before and after the add" % mode):
        return None
    ser = run["series"]
    # Every GET sent after the add (the add's bucket left out: part of it came before).
    after = sum(ser["hits"][at + 1:]) / max(1, sum(ser["hits"][at + 1:]) +
                                            sum(ser["misses"][at + 1:]))
    moved_pp = 100.0 * (steady - after)
    h.log("%s: add at bucket %d (%.1f s); steady %.4f, lowest %.4f at bucket %d: dip %.2f "
          "points; hit ratio from the add to the end %.4f; planned moved fraction %s; run "
          "lost %d of %d" % (mode, at, at * ser["interval_ms"] / 1000, steady, low, low_at,
                             dip_pp, after, planned, run["lost"], run["sent"]))
    t.ok(steady > 0.999, "%s: steady hit ratio before the add %.4f (every key warm)"
         % (mode, steady))
    if window_s:
        t.ok(dip_pp < TARGET_PP, "%s: the hit ratio dips %.2f points (< %.1f)"
             % (mode, dip_pp, TARGET_PP))
    else:
        # Off, every moved key misses from the add on (nothing refills them: GETs only), so
        # the hit ratio of the GETs after it is the steady one less the moved fraction.
        t.ok(planned is not None and abs(moved_pp - 100 * planned) < 8,
             "%s: the dip %.2f points (all GETs after the add; lowest full bucket %.2f) is "
             "about the moved fraction %.2f%%"
             % (mode, moved_pp, dip_pp, 100 * (planned or 0)))

    # Counted before the nodes are asked directly: the client namespace's ARP for them
    # reaches the router too (dropped as bad_arp: not for it).
    s1 = h.check_identity(t, sb)
    d = h.delta(s0, s1)
    warm = {k: d.get(k, 0) for k in ("warm_moved_reads", "warm_absorbed", "warm_requests",
                                     "warm_hits", "warm_misses", "warm_fills",
                                     "warm_not_filled", "warm_deletes", "warm_tx_failed")}
    h.log("%s: warm counters %r; drops %r" % (mode, warm, d["drops"]))
    if window_s:
        t.ok(warm["warm_absorbed"] > 0 and warm["warm_fills"] > 0 and
             warm["warm_deletes"] >= len(written), "%s: warm counters moved" % mode)
        t.eq(warm["warm_tx_failed"], 0, "%s: no warm packet failed to leave" % mode)
    else:
        t.eq(sum(warm.values()), 0, "%s: no warm-up work at all" % mode)
    t.eq(h.own_drops(d["drops"]), {}, "%s: no packet dropped by the router" % mode)
    # The spare itself: warm copies of the moved keys read in the window (on) or none (off);
    # the written keys have their new value there and none at their previous owner.
    fill = cu.owners(sb, read_in_window + quiet, vval)
    filled = [k for k in read_in_window + quiet if spare in fill[k]]
    if window_s:
        t.eq(len(filled), len(read_in_window + quiet), "%s: node%d holds every moved key read "
             "in the window, byte for byte (filled with add)" % (mode, spare))
    else:
        t.eq(filled, [], "%s: node%d holds no moved key it was not written" % (mode, spare))
    wown = cu.owners(sb, written, lambda k: vval(k, b"w"))
    t.eq([k for k in written if wown[k] != [spare]][:5], [],
         "%s: the written keys are on node%d only, with their new value" % (mode, spare))
    if window_s:
        prev_has = [k for k in written if cu.owners(sb, [k], vval)[k]]
        t.eq(prev_has[:5], [], "%s: the previous owners no longer hold the written keys "
             "(deleted there)" % mode)

    log = sb.stop_router()
    t.ok("identity ok" in log, "%s: router exit print: identity ok" % mode)
    return {"mode": mode, "window_s": window_s, "members": MEMBERS, "keys": NKEYS,
            "rate": RATE, "planned_moved": planned, "steady": steady, "lowest": low,
            "dip_pp": dip_pp, "after_add": after, "add_bucket": at, "lowest_bucket": low_at, "lost": run["lost"],
            "warm": warm, "hit_ratio": run["series"]["hit_ratio"]}


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan_bin = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    h.binary("RINGWAY_LOADGEN", "app/ringway-loadgen/ringway-loadgen")
    t = h.Checker("e2e warm-up (%d -> %d nodes)" % (MEMBERS, MEMBERS + 1))
    sb = h.Sandbox("wu", nodes=MEMBERS + 1)
    ctl = cu.Ctl(sb)
    runs = [run_mode(t, sb, ringway, ctl, w, plan_bin) for w in (0, WINDOW_S)]
    for r in runs:
        if r is not None:
            h.log("%s, %d -> %d nodes: dip %.2f points (steady %.4f, lowest %.4f), planned "
                  "moved %.4f" % (r["mode"], MEMBERS, MEMBERS + 1, r["dip_pp"], r["steady"],
                                  r["lowest"], r["planned_moved"] or 0))
    if OUT:
        with open(OUT, "w") as f:
            json.dump(runs, f, indent=1)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
