#!/usr/bin/env python3
"""Hot-key spreading in the sandbox (scripts/bench.sh hotkeys): per skew and mode (spreading
off / on), each node's requests during the measured run from its own memcached `stats`
(cmd_get + cmd_set + delete_hits + delete_misses, after minus before), max/mean over the
nodes, the client's hit ratio (ringway-loadgen), the requests the nodes got beyond the
client's that reached them (node requests minus the router's `forwarded`: the router's
fetches, fills, set copies and deletes, and the replicas' misses; the client's losses on a
loaded machine do not count as savings), the
router's hot_* counters, and the recall of the true top 10 keys (the loadgen's zipf ranks
0..9: keys lg:0000..lg:0009) among the 10 keys `ringwayctl hotkeys` reported.

  report.py --raw DIR --skews "0.99 1.2" --out FILE.json --png FILE.png
"""

import argparse
import json
import os
import subprocess

TOP10 = ["lg:%04d" % i for i in range(10)]


def node_requests(before, after):
    out = {}
    for n in sorted(after, key=lambda k: int(k[4:])):
        a, b = after[n], before[n]
        f = ("cmd_get", "cmd_set", "delete_hits", "delete_misses")
        out[n] = sum(int(a[k]) - int(b[k]) for k in f)
    return out


def ctl_stats(path):
    d = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[1].isdigit():
                d[p[0]] = int(p[1])
    return d


def one(raw, skew, mode):
    def load(name):
        with open(os.path.join(raw, name)) as f:
            return json.load(f)

    req = node_requests(load("nodes0.%s.%s.json" % (skew, mode)),
                        load("nodes1.%s.%s.json" % (skew, mode)))
    lg = load("run.%s.%s.json" % (skew, mode))["run"]
    s0 = ctl_stats(os.path.join(raw, "stats0.%s.%s.txt" % (skew, mode)))
    s1 = ctl_stats(os.path.join(raw, "stats1.%s.%s.txt" % (skew, mode)))
    hot = load("hotkeys.%s.%s.json" % (skew, mode))
    keys = [it["key"] for it in hot.get("items", [])]
    vals = list(req.values())
    mean = sum(vals) / len(vals)
    counters = {k: s1.get(k, 0) - s0.get(k, 0)
                for k in ("forwarded", "returned", "hot_spread", "hot_misses", "hot_fetches",
                          "hot_fills", "hot_fill_skipped", "hot_invalidations",
                          "hot_tx_failed", "dropped")}
    return {
        "skew": float(skew),
        "spreading": mode == "on",
        "node_requests": req,
        "max_over_mean": max(vals) / mean if mean else None,
        "client_requests": lg["sent"],
        "client_replies": lg["replies"],
        "node_requests_total": sum(vals),
        "router_forwarded": counters["forwarded"],
        "extra_requests": sum(vals) - counters["forwarded"],
        "extra_ratio": ((sum(vals) - counters["forwarded"]) / counters["forwarded"]
                        if counters["forwarded"] else None),
        "hit_ratio": lg.get("hit_ratio"),
        "loss_ratio": lg.get("loss_ratio"),
        "reply_pps": lg.get("reply_pps"),
        "router": counters,
        "hotkeys_reported": keys,
        "hot_view": hot.get("items", []),
        "recall_top10": len(set(keys[:10]) & set(TOP10)) / 10.0,
    }


def chart(doc, png, base):
    runs = doc["runs"]
    skews = sorted({r["skew"] for r in runs})
    nodes = sorted(runs[0]["node_requests"], key=lambda k: int(k[4:]))
    plots = []
    for skew in skews:
        dat = "%s.%s.dat" % (base, skew)
        by = {r["spreading"]: r for r in runs if r["skew"] == skew}
        with open(dat, "w") as f:
            f.write("# node off on (share of the mean)\n")
            for n in nodes:
                row = []
                for on in (False, True):
                    r = by.get(on)
                    if r is None:
                        row.append("NaN")
                        continue
                    m = sum(r["node_requests"].values()) / len(nodes)
                    row.append("%.4f" % (r["node_requests"][n] / m))
                f.write("%s %s\n" % (n, " ".join(row)))
        t = "zipf %.2f: max/mean off %.2f, on %.2f" % (
            skew, by[False]["max_over_mean"] if False in by else float("nan"),
            by[True]["max_over_mean"] if True in by else float("nan"))
        plots.append("set title \"%s\"\nplot '%s' using 2:xtic(1) title \"spreading off\" "
                     "lc rgb \"#c05050\", '' using 3 title \"spreading on\" lc rgb "
                     "\"#5070c0\", 1.25 with lines dt 2 lc rgb \"#333333\" title "
                     "\"target 1.25\"" % (t, dat))
    script = """
set terminal pngcairo size %d,480 font ",10"
set output '%s'
set multiplot layout 1,%d title "ringway hot keys: requests per memcached node / mean (each node's own stats), 8 nodes, ringway-loadgen zipf"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key below horizontal
set grid ytics
set ylabel "node requests / mean"
set yrange [0:*]
%s
unset multiplot
""" % (700 * len(skews), png, len(skews), "\n".join(plots))
    with open(base + ".gp", "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", base + ".gp"], check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--skews", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--png")
    a = ap.parse_args()
    runs = []
    for skew in a.skews.split():
        for mode in ("off", "on"):
            runs.append(one(a.raw, skew, mode))
    doc = {"bench": "hotkeys", "nodes": len(runs[0]["node_requests"]), "runs": runs}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=2)
    for r in runs:
        print("  zipf %.2f spreading %-3s: max/mean %.3f, hit ratio %.4f, extra requests "
              "%.1f %%, recall of the top 10 %.1f, client loss %.1f %%" % (
                  r["skew"], "on" if r["spreading"] else "off", r["max_over_mean"],
                  r["hit_ratio"] or 0, 100 * (r["extra_ratio"] or 0), r["recall_top10"],
                  100 * (r["loss_ratio"] or 0)))
    if a.png:
        chart(doc, a.png, os.path.join(a.raw, "chart"))


if __name__ == "__main__":
    main()
