#!/usr/bin/env python3
"""Smoke-run bench_dataplane --quick: the JSON is well formed, every stage and protocol is
present (the hand-off of replies between workers and the IPv6 forward + reply case too), each case's counter equals the packets sent (the benchmark itself also checks that
every forwarded request reached the node pl_lookup() names and every reply its client, and
exits 1 otherwise), and the scaling runs are there. Never judges the time."""
import json
import subprocess
import sys

PROTOS = ("mix", "ascii", "meta", "binary")
WANT = (["parse_" + p for p in PROTOS] + ["place_" + p for p in PROTOS] +
        ["forward_%s_reply_100" % p for p in PROTOS] + ["forward_mix_reply_1400"] +
        ["forward_mix_reply_100_ipv6", "handoff_mix_reply_100"])

proc = subprocess.run([sys.argv[1], "--quick"], capture_output=True, text=True)
sys.stderr.write(proc.stderr)
if proc.returncode != 0:
    sys.exit("bench_dataplane --quick exited %d" % proc.returncode)
doc = json.loads(proc.stdout)
assert doc["benchmark"] == "dataplane" and doc["quick"] is True and doc["ok"] is True, doc
assert doc["ring"]["nodes"] == 1000 and doc["ring"]["vnodes"] == 160, doc["ring"]
cases = {c["name"]: c for c in doc["cases"]}
assert sorted(cases) == sorted(WANT), sorted(cases)
for name in WANT:
    c = cases[name]
    assert c["ok"] is True and c["identity_ok"] is True, c
    assert c["counted"] == c["expected"] == doc["packets_per_case"], c
    stage = c["stage"]
    assert c[stage]["packets"] == c["expected"] and c[stage]["cycles_per_packet"] > 0, c
    if stage == "forward":
        assert c["reply"]["packets"] == c["expected"] and c["reply"]["cycles_per_packet"] > 0, c
    if stage == "handoff":  # replies handed to the other worker: every one taken over
        assert c["counter"] == "taken_over" and c["workers"] == 2, c
        for part in ("give", "take"):
            assert c[part]["packets"] == c["expected"] and c[part]["cycles_per_packet"] > 0, c
    print("ok %s: %s %d = %d sent, %.0f cycles/packet" %
          (name, c["counter"], c["counted"], c["expected"], c[stage]["cycles_per_packet"]))
for key in ("parse_cycles", "place_cycles", "forward_cycles", "reply_100_cycles",
            "reply_1400_cycles", "forward_ipv6_cycles", "reply_100_ipv6_cycles"):
    assert doc["summary"][key] > 0, doc["summary"]
assert doc["scaling"] and doc["scaling"][0]["workers"] == 1, doc["scaling"]
for s in doc["scaling"]:
    assert s["ok"] is True and len(s["forward_cycles_per_worker"]) == s["workers"], s
    print("ok scaling: %d worker(s), %.2f Mpps forward in total" %
          (s["workers"], s["forward_mpps_total"]))
