#!/usr/bin/env python3
"""Smoke-run bench_mcproto --quick: the JSON is well formed, every case is present, each parse
found what it must (keys, reply items). Never judges the time."""
import json
import subprocess
import sys

WANT = {"ascii_get": ("keys", 1), "ascii_get_10": ("keys", 10), "meta_mg": ("keys", 1),
        "binary_get": ("keys", 1), "reply_value_100": ("items", 2)}

out = subprocess.run([sys.argv[1], "--quick"], check=True, capture_output=True, text=True).stdout
doc = json.loads(out)
assert doc["benchmark"] == "mcproto" and doc["quick"] is True, doc
cases = {c["name"]: c for c in doc["cases"]}
assert set(cases) == set(WANT), sorted(cases)
for name, (field, n) in WANT.items():
    c = cases[name]
    assert c["ok"] is True, c
    assert c[field] == n, c
    assert c["ns_per_parse"] > 0, c
    print("ok %s: %s=%d, %.1f ns/parse" % (name, field, n, c["ns_per_parse"]))
