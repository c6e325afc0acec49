#!/usr/bin/env python3
"""Summaries for scripts/bench.sh (Python 3 stdlib + gnuplot for the chart).

  report.py dataplane --raw DIR --callgrind-packets N --out FILE.json
      DIR/run*.json: bench_dataplane runs -> per case the median over runs of each run's
      median cycles/packet; the scaling runs likewise. DIR/cg.{forward,reply,handoff,forward6,reply6}.{1,2}.txt:
      callgrind_annotate of runs with N and 2N packets -> instructions per packet
      ((2N total - N total) / N) and the same per function.
  report.py sandbox --raw DIR --rounds R --clk-tck HZ --out FILE.json --png FILE.png
      DIR/<setup>.<round>.{txt,meta}: memcaslap outputs with CPU ticks of the router,
      nutcracker and nodes; DIR/lg_*.{json,meta}: ringway-loadgen reports. Medians over rounds,
      ratios ringway/direct and ringway/twemproxy, a chart of throughput and latency.
Prints a short table on stdout. Never judges the figures.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rnd(x, nd=1):
    return None if x is None else round(x, nd)


# ------------------------------------------------------------------------------ dataplane

FN_LINE = re.compile(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.+?)(?:\s+\[(.+)\])?\s*$")


def callgrind_functions(path):
    """{'file:function': Ir} and the program total from callgrind_annotate output."""
    fns, total = {}, None
    with open(path) as f:
        for line in f:
            m = FN_LINE.match(line)
            if not m:
                continue
            ir = int(m.group(1).replace(",", ""))
            name = m.group(2)
            if name == "PROGRAM TOTALS":
                total = ir
                continue
            where, _, fn = name.rpartition(":")
            key = "%s:%s" % (os.path.basename(where) or "???", fn)
            fns[key] = fns.get(key, 0) + ir
    return fns, total


def callgrind_stage(raw, stage, n):
    one, two = (os.path.join(raw, "cg.%s.%d.txt" % (stage, m)) for m in (1, 2))
    if not (os.path.exists(one) and os.path.exists(two)):
        return None
    f1, t1 = callgrind_functions(one)
    f2, t2 = callgrind_functions(two)
    per = (t2 - t1) / n
    top = []
    for key in set(f1) | set(f2):
        d = (f2.get(key, 0) - f1.get(key, 0)) / n
        if d >= 0.5:
            top.append({"function": key, "instructions_per_packet": round(d, 1),
                        "share": round(d / per, 3)})
    top.sort(key=lambda e: -e["instructions_per_packet"])
    out = {"packets": [n, 2 * n], "instructions_total": [t1, t2],
           "instructions_per_packet": round(per, 1), "functions": top[:15]}
    one, two = (os.path.join(raw, "cg.%s.%d.l2.txt" % (stage, m)) for m in (1, 2))
    if os.path.exists(one) and os.path.exists(two):
        g1, u1 = callgrind_functions(one)
        g2, u2 = callgrind_functions(two)
        misses = []
        for key in set(g1) | set(g2):
            d = (g2.get(key, 0) - g1.get(key, 0)) / n
            if d >= 0.05:
                misses.append({"function": key, "l2_read_misses_per_packet": round(d, 2)})
        misses.sort(key=lambda e: -e["l2_read_misses_per_packet"])
        out["l2_read_misses_per_packet"] = round((u2 - u1) / n, 2)
        out["l2_misses_by_function"] = misses[:8]
        geo = os.path.join(raw, "cg.l2")
        if os.path.exists(geo):
            with open(geo) as f:
                out["l2_simulated"] = f.read().strip() + " (bytes,ways,line)"
    return out


def report_dataplane(a):
    runs, small = [], []
    for p in sorted(glob.glob(os.path.join(a.raw, "run*.json"))):
        with open(p) as f:
            runs.append(json.load(f))
    for p in sorted(glob.glob(os.path.join(a.raw, "small*.json"))):
        with open(p) as f:
            small.append(json.load(f))
    if not runs:
        sys.exit("report: no bench_dataplane runs in %s" % a.raw)
    first = runs[0]
    cases = []
    for c0 in first["cases"]:
        name, stage = c0["name"], c0["stage"]
        same = [c for r in runs for c in r["cases"] if c["name"] == name]
        fw = [c[stage]["cycles_per_packet"] for c in same]
        e = {"name": name, "stage": stage, "proto": c0["proto"], "runs": len(same),
             "ok": all(c["ok"] for c in same),
             stage: {"cycles_per_packet": rnd(median(fw)), "min": rnd(min(fw)),
                     "max": rnd(max(fw)),
                     "p10": rnd(median([c[stage]["p10"] for c in same]))}}
        e[stage]["mpps_per_core"] = rnd(first["tsc_hz"] / e[stage]["cycles_per_packet"] / 1e6,
                                        2)
        if "reply" in c0:
            e["reply_bytes"] = c0["reply_bytes"]
            rp = [c["reply"]["cycles_per_packet"] for c in same]
            e["reply"] = {"cycles_per_packet": rnd(median(rp)), "min": rnd(min(rp)),
                          "max": rnd(max(rp)),
                          "p10": rnd(median([c["reply"]["p10"] for c in same])),
                          "mpps_per_core": rnd(first["tsc_hz"] / median(rp) / 1e6, 2)}
        for k in ("give", "take"):
            if k in c0:
                e[k] = {"cycles_per_packet": rnd(median([c[k]["cycles_per_packet"]
                                                         for c in same]))}
        cases.append(e)
    summary = {}
    for k in first["summary"]:
        vals = [r["summary"][k] for r in runs if k in r["summary"]]
        if all(isinstance(v, bool) for v in vals):
            continue
        summary[k] = rnd(median(vals), 2)
    summary["forward_target_met"] = summary["forward_cycles"] <= 200
    summary["reply_target_met"] = summary["reply_100_cycles"] <= 100
    breakdown = {
        "parse": summary["parse_cycles"],
        "placement": rnd(summary["place_cycles"] - summary["parse_cycles"]),
        "slot_rewrite_tx": rnd(summary["forward_cycles"] - summary["place_cycles"]),
        "note": "differences of the stage medians: parse = headers + client check + "
                "mcproto + drop (mbuf free); placement = key hash + ring lookup; "
                "slot_rewrite_tx = request slot, rewrite, checksums, TX ring enqueue minus "
                "the mbuf free the dropping stages pay",
    }
    if small:
        sm = {}
        for k in ("parse_cycles", "place_cycles", "forward_cycles", "reply_100_cycles"):
            sm[k] = rnd(median([r["summary"][k] for r in small if k in r["summary"]]))
        sm["nodes"] = small[0]["ring"]["nodes"]
        sm["vnodes"] = small[0]["ring"]["vnodes"]
        sm["runs"] = len(small)
        sm["placement"] = rnd(sm["place_cycles"] - sm["parse_cycles"])
        breakdown["small_ring"] = sm
    scaling = []
    for s0 in first.get("scaling", []):
        w = s0["workers"]
        same = [s for r in runs for s in r.get("scaling", []) if s["workers"] == w]
        scaling.append({
            "workers": w, "runs": len(same),
            "forward_mpps_total": rnd(median([s["forward_mpps_total"] for s in same]), 2),
            "reply_mpps_total": rnd(median([s["reply_mpps_total"] for s in same]), 2),
            "forward_cycles_per_worker": [rnd(median([s["forward_cycles_per_worker"][i]
                                                      for s in same])) for i in range(w)],
            "reply_cycles_per_worker": [rnd(median([s["reply_cycles_per_worker"][i]
                                                    for s in same])) for i in range(w)],
            "ok": all(s["ok"] for s in same)})
    cg = {}
    for stage in ("forward", "reply", "handoff", "forward6", "reply6"):
        st = callgrind_stage(a.raw, stage, a.callgrind_packets)
        if st:
            cg[stage] = st
    doc = {"benchmark": "dataplane", "cpu": first["cpu"], "online_cpus": first["online_cpus"],
           "tsc_hz": first["tsc_hz"], "dpdk": first["dpdk"], "ring": first["ring"],
           "runs": len(runs), "packets_per_case": first["packets_per_case"],
           "loadavg_1min": [r.get("loadavg_1min") for r in runs],
           "statistic": "median over runs of each run's median over batches (p10: median "
                        "over runs of each run's 10th percentile: the quieter batches)",
           "ok": all(r["ok"] for r in runs), "summary": summary,
           "breakdown_cycles": breakdown, "cases": cases, "scaling": scaling,
           "callgrind": cg}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    hz = first["tsc_hz"] / 1e9
    print("dataplane: %s, TSC %.2f GHz, ring %d x %d, median of %d runs (load average %s)" %
          (first["cpu"], hz, first["ring"]["nodes"], first["ring"]["vnodes"], len(runs),
           " ".join("%.1f" % r.get("loadavg_1min", -1) for r in runs)))
    print("%-28s %10s %10s %8s %8s" % ("case", "cycles/pkt", "range", "Mpps", "p10"))
    for c in cases:
        st = c[c["stage"]]
        print("%-28s %10.1f %10s %8.2f %8.1f" % (
            c["name"] + " " + c["stage"], st["cycles_per_packet"],
            "%.0f-%.0f" % (st["min"], st["max"]), st["mpps_per_core"], st["p10"]))
        if "reply" in c:
            rp = c["reply"]
            print("%-28s %10.1f %10s %8.2f %8.1f" % (
                "  reply %d B" % c["reply_bytes"], rp["cycles_per_packet"],
                "%.0f-%.0f" % (rp["min"], rp["max"]), rp["mpps_per_core"], rp["p10"]))
    print("breakdown (cycles): parse %.0f, placement %.0f, slot+rewrite+tx %.0f" %
          (breakdown["parse"], breakdown["placement"], breakdown["slot_rewrite_tx"]))
    if small:
        sm = breakdown["small_ring"]
        print("on a %d-node ring: placement %.0f cycles (parse %.0f, place %.0f), forward %.0f" %
              (sm["nodes"], sm["placement"], sm["parse_cycles"], sm["place_cycles"],
               sm["forward_cycles"]))
    if "handoff_cycles" in summary:
        print("hand-off (reply on the other worker): %.1f cycles (worker 1 %.1f + worker 0 "
              "%.1f) vs direct reply %.1f" % (
                  summary["handoff_cycles"], summary["handoff_give_cycles"],
                  summary["handoff_take_cycles"], summary["reply_100_cycles"]))
    for s in scaling:
        print("scaling: %d worker(s): forward %.2f Mpps, reply %.2f Mpps in total" %
              (s["workers"], s["forward_mpps_total"], s["reply_mpps_total"]))
    for stage, st in cg.items():
        print("callgrind %s: %.1f instructions/packet; top: %s" % (
            stage, st["instructions_per_packet"],
            ", ".join("%s %.0f" % (e["function"].split(":")[-1], e["instructions_per_packet"])
                      for e in st["functions"][:6])))
        if "l2_read_misses_per_packet" in st:
            print("  simulated L2 read misses/packet: %.2f (%s)" % (
                st["l2_read_misses_per_packet"],
                ", ".join("%s %.2f" % (e["function"].split(":")[-1],
                                       e["l2_read_misses_per_packet"])
                          for e in st["l2_misses_by_function"][:5])))
    if "forward_ipv6_cycles" in summary:
        print("IPv6 (target within 10%%): forward %.1f cycles vs IPv4 %.1f (x%.3f), reply "
              "%.1f vs %.1f (x%.3f)" % (
                  summary["forward_ipv6_cycles"], summary["forward_cycles"],
                  summary["forward_ipv6_vs_ipv4"], summary["reply_100_ipv6_cycles"],
                  summary["reply_100_cycles"], summary["reply_ipv6_vs_ipv4"]))
    for v6, v4 in (("forward6", "forward"), ("reply6", "reply")):
        if v6 in cg and v4 in cg:
            print("callgrind IPv6 %s: %.1f instructions/packet vs IPv4 %.1f (x%.3f)" % (
                v4, cg[v6]["instructions_per_packet"], cg[v4]["instructions_per_packet"],
                cg[v6]["instructions_per_packet"] / cg[v4]["instructions_per_packet"]))
    print("targets: forward %.0f <= 200: %s; reply %.0f <= 100: %s" % (
        summary["forward_cycles"], summary["forward_target_met"], summary["reply_100_cycles"],
        summary["reply_target_met"]))
    return 0 if doc["ok"] else 1


# ------------------------------------------------------------------------------ sandbox

def parse_meta(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                if k:
                    try:
                        out[k] = float(v)
                    except ValueError:
                        out[k] = v
    return out


def log2_percentile(dist, q):
    """memcaslap's bucket i holds latencies in (2^(i-1), 2^i] us; interpolate in log2."""
    total = sum(dist.values())
    if total == 0:
        return None
    want, seen = q * total, 0
    for i in sorted(dist):
        c = dist[i]
        if c and seen + c >= want:
            frac = (want - seen) / c
            return 2 ** (i - 1 + frac) if i > 0 else 1.0
        seen += c
    return float(2 ** max(dist))


def parse_memcaslap(path):
    with open(path, errors="replace") as f:
        text = f.read()
    m = re.search(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", text)
    out = {"ok": m is not None}
    if m:
        out.update(run_s=float(m.group(1)), ops=int(m.group(2)), tps=int(m.group(3)))
    for k in ("udp_timeout", "packet_drop", "get_misses", "verify_failed"):
        mm = re.search(r"^%s: (\d+)" % k, text, re.M)
        if mm:
            out[k] = int(mm.group(1))
    tot = text.find("Total Statistics")
    if tot >= 0:
        block = text[tot:text.find("\n\n", text.find("Log2 Dist", tot))]
        avg = re.search(r"Avg:\s+(\d+)", block)
        out["latency_avg_us"] = int(avg.group(1)) if avg else None
        dist = {}
        for row in re.finditer(r"^\s+(\d+):((?:\s+\d+)+)\s*$", block, re.M):
            base = int(row.group(1))
            for j, c in enumerate(row.group(2).split()):
                dist[base + j] = int(c)
        out["latency_p50_us"] = rnd(log2_percentile(dist, 0.50))
        out["latency_p99_us"] = rnd(log2_percentile(dist, 0.99))
    return out


SETUPS = [
    ("direct_udp", "direct to one node, UDP (memcaslap -U)"),
    ("ringway_udp", "through ringway, UDP (memcaslap -U)"),
    ("twemproxy_tcp", "through twemproxy, TCP (memcaslap)"),
    ("direct_tcp", "direct to one node, TCP (memcaslap)"),
]


def report_sandbox(a):
    hz = a.clk_tck
    doc = {"benchmark": "sandbox", "rounds": a.rounds, "memcaslap": {}, "loadgen": {}}
    loads = []
    for p in sorted(glob.glob(os.path.join(a.raw, "*.meta"))):
        la = parse_meta(p).get("loadavg_1min")
        if isinstance(la, float):
            loads.append(la)
    doc["loadavg_1min"] = {"min": min(loads), "median": median(loads),
                           "max": max(loads)} if loads else None
    if loads:
        print("load average (1 min) before the runs: %.1f .. %.1f, median %.1f" %
              (min(loads), max(loads), median(loads)))
    print("%-16s %9s %9s %9s %9s %12s %s" % ("memcaslap", "TPS", "avg us", "p50 us*",
                                              "p99 us*", "proxy CPU", "(s per M req)"))
    for key, label in SETUPS:
        rounds = []
        for r in range(1, a.rounds + 1):
            txt = os.path.join(a.raw, "%s.%d.txt" % (key, r))
            if not os.path.exists(txt):
                continue
            e = parse_memcaslap(txt)
            meta = parse_meta(os.path.join(a.raw, "%s.%d.meta" % (key, r)))
            ops = e.get("ops") or 0
            proxy_ticks = meta.get("router_ticks" if key.startswith("ringway") else
                                   "twem_ticks" if key.startswith("twemproxy") else "none")
            e["proxy_cpu_s_per_mreq"] = (rnd(proxy_ticks / hz / ops * 1e6, 2)
                                         if proxy_ticks is not None and ops else None)
            sys_ticks = meta.get("router_sys_ticks" if key.startswith("ringway") else
                                 "twem_sys_ticks" if key.startswith("twemproxy") else "none")
            e["proxy_cpu_sys_share"] = (rnd(sys_ticks / proxy_ticks, 2)
                                        if sys_ticks is not None and proxy_ticks else None)
            e["proxy_cpu_share"] = (rnd(proxy_ticks / hz / meta["wall_s"], 2)
                                    if proxy_ticks is not None and meta.get("wall_s") else None)
            e["nodes_cpu_s_per_mreq"] = (rnd(meta.get("node_ticks", 0) / hz / ops * 1e6, 2)
                                         if ops else None)
            e["router_idle_cpu_s"] = (rnd(meta.get("router_ticks", 0) / hz, 2)
                                      if not key.startswith("ringway") else None)
            rounds.append(e)
        s = {"label": label, "rounds": rounds}
        for k in ("tps", "latency_avg_us", "latency_p50_us", "latency_p99_us",
                  "proxy_cpu_s_per_mreq", "proxy_cpu_sys_share", "proxy_cpu_share",
                  "nodes_cpu_s_per_mreq"):
            s[k] = median([e.get(k) for e in rounds])
        s["udp_timeouts"] = sum(e.get("udp_timeout", 0) for e in rounds)
        doc["memcaslap"][key] = s
        print("%-16s %9s %9s %9s %9s %12s" % (
            key, s["tps"], s["latency_avg_us"], s["latency_p50_us"], s["latency_p99_us"],
            "-" if s["proxy_cpu_s_per_mreq"] is None else s["proxy_cpu_s_per_mreq"]))
    print("  (* percentiles from memcaslap's log2 histogram: interpolated within a factor-2 "
          "bucket)")
    m = doc["memcaslap"]

    def ratio(x, y):
        return rnd(x / y, 3) if x and y else None
    doc["ratios"] = {
        "ringway_over_direct_udp_tps": ratio(m["ringway_udp"]["tps"], m["direct_udp"]["tps"]),
        "ringway_udp_over_twemproxy_tcp_tps": ratio(m["ringway_udp"]["tps"],
                                                    m["twemproxy_tcp"]["tps"]),
        "twemproxy_over_direct_tcp_tps": ratio(m["twemproxy_tcp"]["tps"],
                                               m["direct_tcp"]["tps"]),
        "ringway_over_twemproxy_cpu_per_req": ratio(m["ringway_udp"]["proxy_cpu_s_per_mreq"],
                                                    m["twemproxy_tcp"]["proxy_cpu_s_per_mreq"]),
        "ringway_over_direct_udp_latency_avg": ratio(m["ringway_udp"]["latency_avg_us"],
                                                     m["direct_udp"]["latency_avg_us"]),
        "ringway_udp_over_twemproxy_tcp_latency_avg": ratio(
            m["ringway_udp"]["latency_avg_us"], m["twemproxy_tcp"]["latency_avg_us"]),
    }
    print("%-18s %9s %9s %8s %8s %8s %8s %8s %12s" % (
        "ringway-loadgen", "req/s", "lost", "hit", "p50 us", "p90 us", "p99 us", "p99.9",
        "router CPU"))
    for p in sorted(glob.glob(os.path.join(a.raw, "lg_*.json"))):
        name = os.path.basename(p)[3:-5]
        with open(p) as f:
            lg = json.load(f)
        run = lg["run"]
        meta = parse_meta(p[:-5] + ".meta")
        lat = run["latency_us"]
        e = {"reply_pps": run["reply_pps"], "sent": run["sent"], "replies": run["replies"],
             "lost": run["lost"], "loss_ratio": run["loss_ratio"],
             "hit_ratio": run["hit_ratio"],
             "latency_us": {k: lat[k] for k in ("mean", "p50", "p90", "p99", "p99.9", "max")},
             "target_pps": lg["config"].get("target_pps"),
             "window": lg["config"].get("window")}
        if name.startswith("ringway") and run["replies"]:
            e["router_cpu_s_per_mreq"] = rnd(meta.get("router_ticks", 0) / hz /
                                             run["replies"] * 1e6, 2)
            e["router_cpu_share"] = rnd(meta.get("router_ticks", 0) / hz / run["elapsed_s"], 2)
        doc["loadgen"][name] = e
        print("%-18s %9.0f %9d %8.3f %8.0f %8.0f %8.0f %8.0f %12s" % (
            name, e["reply_pps"], e["lost"], e["hit_ratio"], lat["p50"], lat["p90"],
            lat["p99"], lat["p99.9"], e.get("router_cpu_s_per_mreq", "-")))
    lgd = doc["loadgen"]
    if "ringway_window" in lgd and "direct_window" in lgd:
        doc["ratios"]["loadgen_ringway_over_direct_window32_pps"] = ratio(
            lgd["ringway_window"]["reply_pps"], lgd["direct_window"]["reply_pps"])
    if "ringway_paced" in lgd and "direct_paced" in lgd:
        doc["ratios"]["loadgen_ringway_over_direct_paced_p50"] = ratio(
            lgd["ringway_paced"]["latency_us"]["p50"], lgd["direct_paced"]["latency_us"]["p50"])
    # Same-round ratios (the four runs of a round are minutes apart at most, so the machine's
    # other load is most alike), and their median: steadier than a ratio of medians.
    per_round = {"ringway_over_direct_udp_tps": ("ringway_udp", "direct_udp", "tps"),
                 "ringway_udp_over_twemproxy_tcp_tps": ("ringway_udp", "twemproxy_tcp", "tps"),
                 "twemproxy_over_direct_tcp_tps": ("twemproxy_tcp", "direct_tcp", "tps"),
                 "ringway_over_twemproxy_cpu_per_req": ("ringway_udp", "twemproxy_tcp",
                                                        "proxy_cpu_s_per_mreq")}
    doc["ratios_per_round"] = {}
    for name, (x, y, k) in per_round.items():
        rs = [ratio(rx.get(k), ry.get(k)) for rx, ry in zip(m[x]["rounds"], m[y]["rounds"])]
        doc["ratios_per_round"][name] = {"rounds": rs, "median": median(rs)}
    print("ratios (of medians): " + ", ".join("%s %s" % kv for kv in doc["ratios"].items()))
    print("ratios (median of same-round ratios): " + ", ".join(
        "%s %s %s" % (k, v["median"], v["rounds"]) for k, v in doc["ratios_per_round"].items()))
    exit_txt = os.path.join(a.raw, "router-exit.txt")
    if os.path.exists(exit_txt):
        with open(exit_txt) as f:
            ident = [l.strip() for l in f if l.startswith("identity")]
        doc["router_identity"] = ident[-1] if ident else None
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    if a.png:
        chart(doc, a.png, os.path.join(a.raw, "chart"))
    return 0


def series(dat, titles):
    """gnuplot histogram series for the columns of @dat that hold a number (an all-NaN column,
    e.g. a tool that did not run, is left out: gnuplot refuses a histogram without points)."""
    rows = []
    with open(dat) as f:
        for line in f:
            if not line.startswith("#"):
                rows.append(line.rsplit('"', 1)[1].split())
    cols = [i for i in range(len(titles)) if any(r[i] != "NaN" for r in rows)]
    parts = []
    for n, i in enumerate(cols):
        using = "%d:xtic(1)" % (i + 2) if n == 0 else "%d" % (i + 2)
        parts.append("%s using %s title \"%s\"" % ("'%s'" % dat if n == 0 else "''", using,
                                                     titles[i]))
    return ", \\\n     ".join(parts) if parts else "NaN notitle"


def chart(doc, png, base):
    """Two panels: throughput (memcaslap TPS, loadgen closed-loop req/s) and latency (memcaslap
    avg, loadgen p50/p99 at the paced rate)."""
    m, lg = doc["memcaslap"], doc["loadgen"]
    names = {"direct_udp": "direct UDP", "ringway_udp": "ringway UDP",
             "twemproxy_tcp": "twemproxy TCP", "direct_tcp": "direct TCP"}
    with open(base + ".tput.dat", "w") as f:
        f.write("# setup memcaslap loadgen\n")
        for k, lbl in names.items():
            lgk = {"direct_udp": "direct_window", "ringway_udp": "ringway_window"}.get(k)
            f.write('"%s" %s %s\n' % (lbl, m[k]["tps"] or 0,
                                      lg[lgk]["reply_pps"] if lgk in lg else "NaN"))
    with open(base + ".lat.dat", "w") as f:
        f.write("# setup memcaslap_avg memcaslap_p99 loadgen_p50 loadgen_p99\n")
        for k, lbl in names.items():
            lgk = {"direct_udp": "direct_paced", "ringway_udp": "ringway_paced"}.get(k)
            lat = lg[lgk]["latency_us"] if lgk in lg else None
            f.write('"%s" %s %s %s %s\n' % (lbl, m[k]["latency_avg_us"] or "NaN",
                                            m[k]["latency_p99_us"] or "NaN",
                                            lat["p50"] if lat else "NaN",
                                            lat["p99"] if lat else "NaN"))
    with open(base + ".cpu.dat", "w") as f:
        f.write("# setup proxy_cpu_s_per_million_requests\n")
        for k in ("ringway_udp", "twemproxy_tcp"):
            f.write('"%s" %s\n' % (names[k], m[k]["proxy_cpu_s_per_mreq"] or "NaN"))
    rate = lg.get("ringway_paced", {}).get("target_pps") or "?"
    if isinstance(rate, float):
        rate = "%.0f" % rate
    script = """
set terminal pngcairo size 1500,560 font ",10"
set output '%(png)s'
set multiplot layout 1,3 title "ringway sandbox: one memcached node directly, through ringway, through twemproxy (medians; 2 vCPUs shared by client, proxy and nodes)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key below horizontal font ",9"
set grid ytics
set xtics nomirror rotate by -25 font ",9"
set title "throughput (requests/s, higher is better)"
set ylabel "requests/s"
set yrange [0:*]
plot %(tput_plot)s
set title "latency (us, lower is better; log scale)"
set ylabel "microseconds"
set logscale y
set yrange [10:*]
plot %(lat_plot)s
unset logscale y
set title "proxy process CPU s per million requests (memcaslap runs)"
set ylabel "CPU seconds"
set yrange [0:*]
plot '%(base)s.cpu.dat' using 2:xtic(1) title "utime + stime" lc rgb "#c05050"
unset multiplot
""" % {"png": png, "base": base,
       "tput_plot": series(base + ".tput.dat", ["memcaslap, 8 conns",
                                                 "loadgen, 32 in flight"]),
       "lat_plot": series(base + ".lat.dat", ["memcaslap mean", "memcaslap p99 (log2 buckets)",
                                              "loadgen p50 at %s/s" % rate,
                                              "loadgen p99 at %s/s" % rate])}
    with open(base + ".gp", "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", base + ".gp"], check=True)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    d = sub.add_parser("dataplane")
    d.add_argument("--raw", required=True)
    d.add_argument("--callgrind-packets", type=int, default=8192)
    d.add_argument("--out", required=True)
    s = sub.add_parser("sandbox")
    s.add_argument("--raw", required=True)
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--clk-tck", type=float, default=100.0)
    s.add_argument("--out", required=True)
    s.add_argument("--png")
    a = ap.parse_args()
    return report_dataplane(a) if a.what == "dataplane" else report_sandbox(a)


if __name__ == "__main__":
    sys.exit(main())
