#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Smoke test of the placement benchmark: run it with --quick and check its JSON's shape and the
correctness flags (index answer == binary search). Never judges speed.

usage: check_quick.py BENCH_PLACEMENT_BINARY
"""
import json
import subprocess
import sys

ALGOS = ["ring", "ketama", "twemproxy", "jump", "rendezvous", "maglev", "modulo"]
CONTINUUM = {"ring", "ketama", "twemproxy"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    p = subprocess.run([sys.argv[1], "--quick"], capture_output=True, text=True, timeout=280)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        fail("bench_placement --quick exited %d" % p.returncode)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        fail("output is not JSON: %s\n%s" % (e, p.stdout[:2000]))
    if doc.get("mode") != "quick" or doc.get("all_answers_correct") is not True:
        fail("mode or all_answers_correct wrong: %r %r" % (doc.get("mode"),
                                                          doc.get("all_answers_correct")))
    if [s["nodes"] for s in doc["sizes"]] != [10, 100, 1000, 10000]:
        fail("sizes: %r" % [s["nodes"] for s in doc["sizes"]])
    for size in doc["sizes"]:
        algos = {a["algo"]: a for a in size["algorithms"]}
        if sorted(algos) != sorted(ALGOS):
            fail("%d nodes: algorithms %r" % (size["nodes"], sorted(algos)))
        for name, a in algos.items():
            where = "%s at %d nodes" % (name, size["nodes"])
            for k in ("ns_lookup", "ns_lookup_with_hash", "ns_key_hash", "build_ms"):
                if not isinstance(a[k], (int, float)) or a[k] <= 0:
                    fail("%s: %s = %r" % (where, k, a[k]))
            if a["memory_bytes"] <= 0 or a["answers_checked"] < 1024:
                fail("%s: memory %r, answers checked %r" % (where, a["memory_bytes"],
                                                            a["answers_checked"]))
            if name in CONTINUUM:
                if a["index_equals_bsearch"] is not True or not a["ns_bsearch"] > 0:
                    fail("%s: index_equals_bsearch %r" % (where, a["index_equals_bsearch"]))
                if a["points"] < 150 * size["nodes"]:
                    fail("%s: only %d points" % (where, a["points"]))
            elif a["index_equals_bsearch"] is not None or a["ns_bsearch"] is not None:
                fail("%s: binary search figures for a non-continuum algorithm" % where)
        lm = size["libmemcached"]
        # libmemcached itself aborts beyond libmemcached_max_servers (100) ketama servers.
        # Agreement is reported, not required here: test_compat_ketama requires it.
        if (doc["libmemcached"] is not None and size["nodes"] <= doc["libmemcached_max_servers"]
                and (lm is None or not lm["ns_with_hash"] > 0
                     or not 0 <= lm["agrees_with_ketama"] <= 1)):
            fail("%d nodes: libmemcached figures missing" % size["nodes"])
    ring = doc["sizes"][2]["algorithms"][0]
    print("ok: ring at 1000 nodes %.2f ns/lookup (bsearch %.2f, %.1fx); JSON well-formed" % (
        ring["ns_lookup"], ring["ns_bsearch"], ring["index_vs_bsearch"]))


if __name__ == "__main__":
    main()
