#!/usr/bin/env python3
"""Scale-out under load (scripts/bench.sh scaleout): per run (ring with warm-up, ring, modulo,
ketama without) the GET hit ratio per 100 ms from ringway-loadgen's run.series, with the live
`ringwayctl add` of an 11th node ADD_AT s into the load.

Per run: the steady level (mean hit ratio of the buckets before the add, the first bucket, the
ramp, left out), the lowest bucket from the add on and the dip (steady - lowest, percentage
points), the extra misses (GET misses from the add bucket on beyond what the steady level
would have missed), the hit ratio over the last 5 s, the planned moved fraction (`ringwayctl
plan add`) and the warm-up's extra requests from the router's counters (warm_requests: reads
sent to previous owners; warm_fills: `add`s to new owners; warm_deletes: deletes sent to
previous owners for writes of moved keys).

  report.py --raw DIR --runs "ring-warmup ring modulo ketama" --members 10 --out FILE.json
            --png FILE.png [--dist D --rate R --keys N]
"""

import argparse
import json
import os
import subprocess

WARM = ("warm_moved_reads", "warm_unmoved", "warm_requests", "warm_hits", "warm_misses",
        "warm_fills", "warm_not_filled", "warm_deletes", "warm_absorbed", "warm_tx_failed")


def counters(path):
    d = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[1].lstrip("-").isdigit():
                d[p[0]] = int(p[1])
    return d


def one(raw, run):
    def path(name):
        return os.path.join(raw, name % run)

    with open(path("lg.%s.json")) as f:
        lg = json.load(f)
    with open(path("add.%s.unix")) as f:
        t_add = float(f.read().strip())
    with open(path("plan.%s.json")) as f:
        plan = [json.loads(x) for x in f.read().splitlines() if x.startswith("{")][-1]
    s0, s1 = counters(path("stats0.%s.txt")), counters(path("stats1.%s.txt"))
    ser = lg["run"]["series"]
    iv = ser["interval_ms"] / 1000.0
    at = int((t_add - ser["start_unix"]) / iv)
    hits, misses, ratio = ser["hits"], ser["misses"], ser["hit_ratio"]
    n = len(ratio)
    # The last bucket is partial (the run ends inside it): left out when it has few GETs.
    full = [i for i in range(n) if hits[i] + misses[i] > 0]
    med = sorted(hits[i] + misses[i] for i in full)[len(full) // 2] if full else 0
    use = [i for i in full if hits[i] + misses[i] >= med / 2]
    before = [ratio[i] for i in use if 1 <= i < at]
    after = [(ratio[i], i) for i in use if i >= at]
    steady = sum(before) / len(before)
    low, low_at = min(after)
    gets_after = sum(hits[i] + misses[i] for i in range(at, n))
    miss_after = sum(misses[i] for i in range(at, n))
    tail = [i for i in use if i >= n - int(5 / iv)]
    tail_ratio = (sum(hits[i] for i in tail) /
                  max(1, sum(hits[i] + misses[i] for i in tail)))
    warm = {k: s1.get(k, 0) - s0.get(k, 0) for k in WARM}
    return {
        "run": run,
        "algorithm": run.split("-")[0],
        "warmup": run.endswith("-warmup"),
        "planned_moved": plan.get("moved"),
        "add_at_s": at * iv,
        "add_bucket": at,
        "steady_hit_ratio": steady,
        "lowest_hit_ratio": low,
        "lowest_at_s": low_at * iv,
        "dip_pp": 100.0 * (steady - low),
        "gets_after_add": gets_after,
        "misses_after_add": miss_after,
        "extra_misses": round(miss_after - (1.0 - steady) * gets_after),
        "hit_ratio_last_5s": tail_ratio,
        "hit_ratio_run": lg["run"].get("hit_ratio"),
        "sent": lg["run"]["sent"],
        "lost": lg["run"]["lost"],
        "preload_keys_missing": lg.get("preload_keys_missing"),
        "router": warm,
        "extra_requests": warm["warm_requests"] + warm["warm_fills"] + warm["warm_deletes"],
        "interval_ms": ser["interval_ms"],
        "hit_ratio": ratio,
    }


def chart(doc, png, base):
    runs = doc["runs"]
    dat = base + ".dat"
    n = max(len(r["hit_ratio"]) for r in runs)
    iv = runs[0]["interval_ms"] / 1000.0
    with open(dat, "w") as f:
        f.write("# t_s %s (hit ratio %%)\n" % " ".join(r["run"] for r in runs))
        for i in range(n):
            row = []
            for r in runs:
                v = r["hit_ratio"][i] if i < len(r["hit_ratio"]) else None
                row.append("NaN" if v is None else "%.3f" % (100 * v))
            f.write("%.2f %s\n" % (i * iv, " ".join(row)))
    color = {"ring-warmup": "#2060c0", "ring": "#d08020", "modulo": "#c03030",
             "ketama": "#309040"}
    lines = []
    for j, r in enumerate(runs):
        t = "%s%s: dip %.1f pp, %d extra misses" % (
            r["algorithm"], " + warm-up" if r["warmup"] else "", r["dip_pp"], r["extra_misses"])
        lines.append("'%s' using 1:%d with lines lw 1.5 lc rgb \"%s\" title \"%s\"" %
                     (dat, j + 2, color.get(r["run"], "#555555"), t))
    add = runs[0]["add_at_s"]
    script = """
set terminal pngcairo size 1200,520 font ",10"
set output '%s'
set multiplot layout 1,2 title "ringway: GET hit ratio per 100 ms through a live add, %d -> %d memcached nodes (%s keys, %s, %s/s, 90%% GETs)"
set xlabel "seconds into the load"
set ylabel "GET hit ratio (%%)"
set grid
set key below
set arrow 1 from %.1f, graph 0 to %.1f, graph 1 nohead dt 2 lc rgb "#333333"
set label 1 "ringwayctl add" at %.1f, graph 0.5 left offset 0.5,0
set title "full scale"
set yrange [0:101]
plot %s
set title "zoom: 85-100%%"
set yrange [85:100.5]
set key below
plot %s
unset multiplot
""" % (png, doc["members"], doc["members"] + 1, doc["keys"], doc["dist"], doc["rate"],
       add, add, add, ", ".join(lines), ", ".join(lines))
    with open(base + ".gp", "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", base + ".gp"], check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--members", type=int, required=True)
    ap.add_argument("--dist", default="uniform")
    ap.add_argument("--rate", default="")
    ap.add_argument("--keys", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--png")
    a = ap.parse_args()
    runs = [one(a.raw, r) for r in a.runs.split()]
    doc = {"bench": "scaleout", "members": a.members, "dist": a.dist, "rate": a.rate,
           "keys": a.keys, "runs": runs}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    for r in runs:
        print("  %-12s moved %5.1f%%: steady %.4f, lowest %.4f at %.1fs: dip %5.2f pp; extra "
              "misses %6d of %d GETs after the add; last 5 s %.4f; warm-up requests %d "
              "(reads %d, adds %d, deletes %d); lost %d of %d" % (
                  r["run"], 100 * (r["planned_moved"] or 0), r["steady_hit_ratio"],
                  r["lowest_hit_ratio"], r["lowest_at_s"], r["dip_pp"], r["extra_misses"],
                  r["gets_after_add"], r["hit_ratio_last_5s"], r["extra_requests"],
                  r["router"]["warm_requests"], r["router"]["warm_fills"],
                  r["router"]["warm_deletes"], r["lost"], r["sent"]))
    if a.png:
        chart(doc, a.png, os.path.join(a.raw, "chart"))


if __name__ == "__main__":
    main()
