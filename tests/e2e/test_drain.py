#!/usr/bin/env python3
"""e2e: drain under load (issue 31 item 4). 4 memcached nodes behind the router; node1 is
frozen (SIGSTOP) with a few gets of its keys in flight (request_ms 30 s, so they cannot time
out), three clients (ASCII get, meta mg, binary get) send at a steady rate, open loop, each
request numbered by its request id, and `ringwayctl drain` runs mid-stream:

  - every request sent before `drain` was asked gets its real answer, every one sent after
    it returned gets the drain error (`SERVER_ERROR draining`, binary status 0x86), each
    client's answers switch once and never back (0 requests lost, counted by request id);
  - the router says draining with the frozen node's requests in flight (it cannot be drained
    while they are), node1 let go: their real answers reach their client, then `drained`;
    the gauge drain_state (telemetry, and /metrics ringway_drain_state) says 1, then 2;
  - `undrain`: traffic is served again;
  - the same in silent mode (`drain silent`): requests after it get nothing, and the
    unanswered ones equal the router's `draining` drop counter exactly;
  - the accounting identity.

Counted, never timed: a phase is known by when its request was sent relative to the command
(sent before it was asked, or after it returned), every wait is a bounded poll for a count.
The figures (requests in flight at drain, time to drained, lost) are printed.

Environment: RINGWAY, RINGWAYCTL, RINGWAY_E2E_PORT.
"""
import os
import signal
import socket
import subprocess
import threading
import time

import control_util as cu
import harness as h
from mcudp import bin_request, bin_responses, unframe, frame
from nsutil import socket_in

KEYS = [b"dk%03d" % i for i in range(60)]
FROZEN = 4  # gets of node1's keys in flight when the drain begins
RATE_GAP = 0.004  # seconds between a client's requests
METRICS_PORT = 9151
EXTRA = "\n[tables]\nclient_slots_max = 0\n\n[metrics]\nlisten = 127.0.0.1:%d\n" % METRICS_PORT


def proto_request(proto, key, rid):
    if proto == "ascii":
        return b"get " + key + b"\r\n"
    if proto == "meta":
        return b"mg " + key + b" v\r\n"
    return bin_request("getk", key, opaque=rid)


def classify(proto, payload):
    """'real' (the node's answer), 'drain' (the drain error) or 'other'."""
    if proto == "binary":
        try:
            r = bin_responses(payload)
        except ValueError:
            return "other"
        if not r:
            return "other"
        if r[0]["status"] == 0:
            return "real"
        return "drain" if r[0]["status"] == 0x86 and r[0]["value"] == b"draining" else "other"
    if payload == b"SERVER_ERROR draining\r\n":
        return "drain"
    if proto == "ascii" and payload.startswith(b"VALUE ") and payload.endswith(b"END\r\n"):
        return "real"
    if proto == "meta" and payload.startswith(b"VA "):
        return "real"
    return "other"


class Load(threading.Thread):
    """One client sending requests of `proto` at a steady rate, open loop: the phase each
    request was sent in (by the shared phase counter), and what came back for it."""

    def __init__(self, sb, proto, keys, phase):
        super().__init__(daemon=True)
        self.c = sb.client(timeout=2.0)
        self.proto, self.keys, self.phase = proto, keys, phase
        self.sent = {}  # rid -> phase number when sent
        self.got = {}  # rid -> list of classes
        self.stop = threading.Event()
        self.order = []  # rids in sending order

    def _recv(self, wait):
        end = time.monotonic() + wait
        while True:
            d = self.c._recv_one(end)
            if d is None:
                return
            u = unframe(d)
            if u is None:
                continue
            rid, _seq, _total, _res, payload = u
            self.got.setdefault(rid, []).append(classify(self.proto, payload))

    def run(self):
        i = 0
        while not self.stop.is_set():
            rid = (i % 0xFFFE) + 1
            key = self.keys[i % len(self.keys)]
            self.sent[rid] = self.phase[0]
            self.order.append(rid)
            self.c.sock.send(frame(rid, proto_request(self.proto, key, rid)))
            i += 1
            self._recv(RATE_GAP)
            if i >= 0xFFF0:
                break
        self._recv(0.0)

    def settle(self, want_answers, timeout=20.0):
        """Receive until `want_answers` requests have an answer (or the time is up)."""
        end = time.monotonic() + timeout
        while len(self.got) < want_answers and time.monotonic() < end:
            self._recv(0.1)


def wait_for(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def metrics_drain_state(sb):
    """ringway_drain_state from /metrics (the router's namespace, 127.0.0.1), or None."""
    s = socket_in(sb.env["NS_ROUTER"], socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5.0)
    data = b""
    try:
        s.connect(("127.0.0.1", METRICS_PORT))
        s.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    finally:
        s.close()
    for line in data.decode(errors="replace").splitlines():
        if line.startswith("ringway_drain_state "):
            return int(line.split()[1])
    return None


def drain_status(ctl):
    rc, o = ctl.json("drain", "status")
    return o if rc == 0 else {}


def run_phase(t, sb, ctl, mode, loads_keys, frozen_keys, node1_pid):
    """One drain under load in `mode` (error or silent); returns the figures."""
    phase = [0]  # 0 before `drain` was asked, 1 while it runs, 2 after it returned
    loads = [Load(sb, p, loads_keys, phase) for p in ("ascii", "meta", "binary")]
    inflight = sb.client(timeout=35.0)
    frozen_rids = []
    h.freeze(node1_pid)
    try:
        for k in frozen_keys[:FROZEN]:
            frozen_rids.append(inflight.send(b"get " + k + b"\r\n"))
        t.ok(wait_for(lambda: sb.stats()["slots_live"] >= FROZEN, 10.0),
             "%s: %d gets of frozen node1 in flight" % (mode, FROZEN))
        for ld in loads:
            ld.start()
        # Some traffic first: requests of the 'before' phase answered.
        wait_for(lambda: all(len(ld.got) >= 50 for ld in loads), 20.0)
        s0 = sb.stats()
        phase[0] = 1
        rc, o = ctl.json("drain", mode)
        phase[0] = 2
        t.ok(rc == 0 and o.get("drain") == "draining", "%s: drain -> %r" % (mode, o))
        at_start = int(o.get("in_flight", -1))
        t.ok(at_start >= FROZEN, "%s: %d requests in flight at the drain (>= %d frozen)"
             % (mode, at_start, FROZEN))
        # After: every client sends some requests into the drain.
        n_after = lambda ld: sum(1 for r in ld.order if ld.sent[r] == 2)
        wait_for(lambda: all(n_after(ld) >= 50 for ld in loads), 30.0)
        st = drain_status(ctl)
        t.ok(st.get("drain") == "draining",
             "%s: still draining while node1's requests are in flight (%r)" % (mode, st))
        t.eq(sb.stats().get("drain_state"), 1, "%s: gauge drain_state while draining" % mode)
        t.eq(metrics_drain_state(sb), 1, "%s: /metrics ringway_drain_state while draining"
             % mode)
    finally:
        os.kill(node1_pid, signal.SIGCONT)
    # Node1 back: its requests' real answers reach the client; then drained.
    frozen_ok = 0
    for rid in frozen_rids:
        try:
            if classify("ascii", inflight.collect(rid, timeout=30.0)) == "real":
                frozen_ok += 1
        except Exception as e:  # noqa: BLE001 - a missing answer is what is counted
            h.log("%s: frozen request %d: %r" % (mode, rid, e))
    t.eq(frozen_ok, FROZEN, "%s: replies of the requests in flight at the drain proxied" % mode)
    inflight.close()
    st = wait_for(lambda: (lambda s: s if s.get("drain") == "drained" else None)(
        drain_status(ctl)), 35.0)
    t.ok(st and st.get("drain") == "drained", "%s: drained (%r)" % (mode, st))
    t.eq(sb.stats().get("drain_state"), 2, "%s: gauge drain_state drained" % mode)
    t.eq(metrics_drain_state(sb), 2, "%s: /metrics ringway_drain_state drained" % mode)
    for ld in loads:
        ld.stop.set()
    for ld in loads:
        ld.join(30)
    # Every request sent has its answer by now, or none ever comes (silent): wait for the
    # answers the counts say are due.
    s1 = h.settled_stats(sb)
    silent_drops = s1["drops"].get("draining", 0) - s0["drops"].get("draining", 0)
    sent = sum(len(ld.sent) for ld in loads)
    due = sent - silent_drops
    end = time.monotonic() + 20.0
    while sum(len(ld.got) for ld in loads) < due and time.monotonic() < end:
        for ld in loads:
            ld._recv(0.05)
    figures = {"mode": mode, "in_flight_at_drain": at_start,
               "drained_after_ms": int((st or {}).get("drained_after_ms", -1)),
               "sent": sent}
    lost = 0
    unanswered = 0
    for ld in loads:
        seen_drain = False
        flips_back = 0
        for rid in ld.order:
            ph, got = ld.sent[rid], ld.got.get(rid, [])
            if len(got) > 1:
                t.ok(False, "%s %s: request %d answered %d times" % (mode, ld.proto, rid,
                                                                     len(got)))
            cls = got[0] if got else None
            if ph == 0:
                if cls != "real":
                    lost += 1
                    h.log("%s %s: request %d before the drain got %r" % (mode, ld.proto,
                                                                        rid, cls))
            elif ph == 2:
                want = "drain" if mode == "error" else None
                if cls != want:
                    lost += 1
                    h.log("%s %s: request %d after the drain got %r" % (mode, ld.proto,
                                                                       rid, cls))
            if cls is None:
                unanswered += 1
            if cls in ("drain", None):
                seen_drain = True
            elif seen_drain:
                flips_back += 1
        t.eq(flips_back, 0, "%s %s: answers switch to the drain once, never back"
             % (mode, ld.proto))
        figures[ld.proto] = "%d sent, %d before, %d after" % (
            len(ld.order), sum(1 for r in ld.order if ld.sent[r] == 0),
            sum(1 for r in ld.order if ld.sent[r] == 2))
        ld.c.close()
    figures["lost"] = lost
    t.eq(lost, 0, "%s: requests lost (wrong or missing answer for their phase)" % mode)
    if mode == "silent":
        figures["unanswered"] = unanswered
        t.eq(unanswered, silent_drops, "silent: unanswered requests = the router's draining "
             "drops")
    else:
        figures["unanswered"] = unanswered
        t.eq(unanswered, 0, "error: every request answered")
        t.eq(s1["drops"].get("draining", 0) - s0["drops"].get("draining", 0), 0,
             "error: no draining drop")
    # Undrain: served again.
    rc, o = ctl.json("undrain")
    t.ok(rc == 0 and o.get("drain") == "serving", "%s: undrain -> %r" % (mode, o))
    c = sb.client(timeout=2.0)
    try:
        ok = sum(1 for k in loads_keys[:20]
                 if classify("ascii", c.request(b"get " + k + b"\r\n")) == "real")
    finally:
        c.close()
    t.eq(ok, 20, "%s: after undrain, gets are served" % mode)
    t.eq(sb.stats().get("drain_state"), 0, "%s: gauge drain_state serving" % mode)
    t.eq(metrics_drain_state(sb), 0, "%s: /metrics ringway_drain_state serving" % mode)
    h.log("drain figures: %r" % figures)
    return figures


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    plan = h.binary("RINGWAY_PLAN", "app/ringway-plan/ringway-plan")
    t = h.Checker("e2e drain under load (error and silent)")
    sb = h.Sandbox("dr", nodes=4)
    ctl = cu.Ctl(sb)
    args = [h.SANDBOX, "config", "--prefix", sb.prefix, "--request-ms", "30000"]
    text = subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout.decode()
    conf = os.path.join(sb.state, "ringway.conf")
    with open(conf, "w") as f:
        f.write(text + EXTRA)
    sb.start_router(ringway, conf)
    t.ok(cu.wait_resolved(sb, 4), "router serves node1..4")
    names = ["node%d" % i for i in range(1, 5)]
    own = h.plan_assign(plan, cu.nodes_file(sb, names, os.path.join(sb.state, "n4")), "ring",
                        KEYS)
    c = sb.client(timeout=2.0)
    for k in KEYS:
        t.eq(c.request(b"set " + k + b" 0 0 1\r\nx\r\n"), b"STORED\r\n", "set %s" % k.decode())
    c.close()
    frozen_keys = [k for k in KEYS if own[k] == "node1"]
    load_keys = [k for k in KEYS if own[k] != "node1"]
    t.ok(len(frozen_keys) >= FROZEN and len(load_keys) >= 20, "keys on node1 and the others")
    with open(os.path.join(sb.state, "node1.pid")) as f:
        node1 = int(f.read())
    rc, o = ctl.json("undrain")
    t.ok(rc != 0, "undrain of a serving router is refused (%r)" % o)
    rc, o = ctl.json("drain", "sometimes")
    t.ok(rc != 0 and drain_status(ctl).get("drain") == "serving",
         "a bad drain form is refused, state unchanged (%r)" % o)
    figs = [run_phase(t, sb, ctl, mode, load_keys, frozen_keys, node1)
            for mode in ("error", "silent")]
    h.check_identity(t, sb)
    t.ok(sb.router_alive(), "router alive")
    for f in figs:
        print("drain %s: in flight at drain %d, drained after %d ms, sent %d, lost %d, "
              "unanswered %d (ascii %s; meta %s; binary %s)"
              % (f["mode"], f["in_flight_at_drain"], f["drained_after_ms"], f["sent"],
                 f["lost"], f["unanswered"], f["ascii"], f["meta"], f["binary"]))
    return t.finish()


if __name__ == "__main__":
    raise SystemExit(main())
