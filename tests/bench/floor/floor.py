#!/usr/bin/env python3
"""What the worker code's forward and reply paths would cost without the router's optional
checks and features: the floor under issue 17's instruction targets (docs/performance.md,
"The floor: what the targets would take").

A copy of the source tree (tracked and untracked files, as they are now) is built with
bench_dataplane; callgrind counts the instructions per packet of `--only forward` and
`--only reply` (stage c, mixed protocols, 1,000 x 160 ring; runs of N and 2N packets,
difference / N, as scripts/bench.sh dataplane does). Then the steps below are applied to the
copy one after the other, each compiling one feature or check out of the per-packet path, and
the counts are taken again after each; last, the same with `--offload` (a NIC's checksum
offloads instead of the software checksums). The copy is a throwaway: nothing here is a
configuration of ringway, and the stripped builds must never serve traffic. bench_dataplane
still checks that every forwarded request reached the node the placement names and every reply
its client, so a step that broke forwarding fails the run.

  floor.py --src TOP --out FILE [--packets N] [--keep]
  floor.py --check --src TOP     every step's text still found in TOP's sources, in order

`--check` (the unit test floor_anchors) fails naming the step and file whose text changed:
refresh that step's edit when the code it strips moves.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

W = "lib/dataplane/dp_worker.c"

# (name, what is compiled out, [(file, text, replacement)]): applied in this order, each on top
# of the ones before. Each replacement keeps the code compiling and the benchmark's traffic
# (IPv4, untagged, one port, every node up, clients in the allowed prefix) served the same.
STEPS = [
    ("client_acl", "the client ACL (allowed prefixes and MACs) on every request", [
        (W, "\tuint64_t mac = 0;\n\n\tif (unlikely(pk->v6) ?",
         "\tuint64_t mac = 0;\n\n\treturn DP_DROP_COUNT; /* floor: no ACL */\n"
         "\tif (unlikely(pk->v6) ?"),
    ]),
    ("hot_keys", "hot-key sampling of every request and the hot-set check", [
        ("lib/dataplane/dp_hot.h",
         "\tif (unlikely(--w->hot_left == 0))\n\t\tdp_hot_sample(w, pk, r);",
         "\t(void)w, (void)pk, (void)r; /* floor: no sampling */"),
        (W, "if (unlikely(w->hot->set != NULL))", "if (0) /* floor: no hot set */"),
    ]),
    ("warm_up", "the warm-up window's checks on requests and replies", [
        (W, "if (unlikely(w->prev_cur != NULL) &&", "if (0 /* floor: no warm-up, no flips */ &&"),
        (W, "if (unlikely(w->now < w->warm_gate) && dp_warm_reply(w, m, pk, s))",
         "if (0) /* floor: no warm-up */"),
    ]),
    ("node_health", "the owner's health word (failover)", [
        ("lib/dataplane/dataplane_priv.h",
         "return atomic_load_explicit(&w->eps[ep].health, memory_order_relaxed) == "
         "DP_EP_SERVING;",
         "(void)w, (void)ep;\n\treturn true; /* floor: every node serving */"),
    ]),
    ("latency_histograms", "the per-node round-trip and router-time histograms", [
        ("lib/dataplane/dp_observe.h", "\tobs_set_add(&w->node_rtt, sl->ep, dp_tsc_to_ns(w, d));",
         "\t(void)d; /* floor: no round-trip histogram */"),
        ("lib/dataplane/dp_observe.h", "\tif (n != 0)\n\t\tobs_hist_add",
         "\tif (0) /* floor: no router-time histogram */\n\t\tobs_hist_add"),
    ]),
    ("reply_origin", "the reply's origin checks: source address and port, source MAC, the "
     "request id's generation (forged, misdirected and late replies)", [
        (W, "\t\t\t\tconst struct rte_ether_hdr *eth)\n{\n",
         "\t\t\t\tconst struct rte_ether_hdr *eth)\n{\n\treturn true; /* floor: any MAC */\n"),
        (W, "\t\t\t\tconst struct dp_slot *sl, uint32_t s)\n{\n",
         "\t\t\t\tconst struct dp_slot *sl, uint32_t s)\n{\n"
         "\treturn true; /* floor: any source */\n"),
        (W, "\tif (unlikely(reqid != sl->reqid))\n\t\treturn dp_count_drop(w, m, DP_DROP_REPLY_STALE);",
         "\tif (0) /* floor: no generation check */\n"
         "\t\treturn dp_count_drop(w, m, DP_DROP_REPLY_STALE);"),
    ]),
    ("vlans", "the VLAN checks and re-tagging on both paths", [
        (W, "\treturn likely(same) || w->node_vlan_fixed;",
         "\t(void)same;\n\treturn true; /* floor: no VLANs */"),
        (W, "\tif (unlikely(pk->vlan != (bool)sl->has_vlan) &&\n",
         "\tif (0 && /* floor: no VLANs */\n"),
        (W, "\tif (pk->vlan)\n\t\t((struct rte_vlan_hdr", "\tif (0)\n\t\t((struct rte_vlan_hdr"),
        (W, "if (unlikely(w->two_ports) && w->node_vlan_fixed &&", "if (0 &&"),
    ]),
    ("ipv6", "the IPv6 and mixed-family choices of the rewrite and slot", [
        (W, "\tif (likely(!pk->v6 && !(sl->fam & DP_FAM_NODE6)))\n\t\trewrite_udp(",
         "\tif (1) /* floor: IPv4 only */\n\t\trewrite_udp("),
        (W, "\tif (likely(!pk->v6 && !(sl->fam & DP_FAM_CLIENT6)))\n\t\trewrite_udp(",
         "\tif (1) /* floor: IPv4 only */\n\t\trewrite_udp("),
        ("lib/dataplane/dp_tx.h", "\tsl->fam = 0;\n\tif (unlikely(pk->v6)) {",
         "\tsl->fam = 0;\n\tif (0) { /* floor: IPv4 only */"),
    ]),
]

TARGETS = {"forward": 600, "reply": 300}


def apply_step(root, step, dry=False, files=None):
    """Apply @p step's edits under @p root (in @p files, path -> text, when given: nothing is
    written). Raises LookupError naming the edit whose text is not there exactly once."""
    name, _, edits = step
    for path, old, new in edits:
        if files is not None and path in files:
            text = files[path]
        else:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        n = text.count(old)
        if n != 1:
            raise LookupError("step %s: %s: the text to replace is there %d times, not once: %r"
                              % (name, path, n, old[:70]))
        text = text.replace(old, new)
        if files is not None:
            files[path] = text
        if not dry:
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)


def check(src):
    files = {}
    for step in STEPS:
        try:
            apply_step(src, step, dry=True, files=files)
        except LookupError as e:
            print("floor: %s" % e, file=sys.stderr)
            return 1
        print("ok %s: %d edit(s) found" % (step[0], len(step[2])))
    return 0


def copy_tree(src, dst):
    out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], check=True, capture_output=True).stdout
    for rel in out.decode().split("\0"):
        if not rel or not os.path.isfile(os.path.join(src, rel)):
            continue  # deleted in the work tree
        os.makedirs(os.path.dirname(os.path.join(dst, rel)) or dst, exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dst, rel))


def run(cmd, log, **kw):
    with open(log, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kw)
    if p.returncode != 0:
        with open(log) as f:
            sys.stderr.write(f.read()[-4000:])
        raise RuntimeError("%s exited %d (log %s)" % (cmd[0], p.returncode, log))


def total_ir(path):
    with open(path) as f:
        for line in f:
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise RuntimeError("no instruction total in " + path)


def callgrind(bench, work, tag, stage, packets, offload):
    irs = []
    for mult in (1, 2):
        out = os.path.join(work, "cg.%s.%s.%d.out" % (tag, stage, mult))
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
               "--toggle-collect=timed_polls", "--callgrind-out-file=" + out, bench,
               "--only", stage, "--packets", str(mult * packets), "--workers", "1"]
        if offload:
            cmd.append("--offload")
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err = p.communicate()[1]
        # valgrind runs the benchmark in its own process: its EAL folder is bench_dp_<pid>,
        # left behind only when it dies.
        shutil.rmtree("/var/run/dpdk/bench_dp_%d" % p.pid, ignore_errors=True)
        if p.returncode != 0:
            sys.stderr.write(err[-4000:])
            raise RuntimeError("bench_dataplane --only %s (%s) exited %d" %
                               (stage, tag, p.returncode))
        irs.append(total_ir(out))
    return round((irs[1] - irs[0]) / packets, 1)


def measure(bench, work, tag, packets, offload=False):
    r = {s: callgrind(bench, work, tag, s, packets, offload) for s in ("forward", "reply")}
    print("%-20s forward %7.1f  reply %6.1f%s" % (tag, r["forward"], r["reply"],
                                                  "  (--offload)" if offload else ""),
          flush=True)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="the source tree (a git work tree)")
    ap.add_argument("--out", help="JSON to write")
    ap.add_argument("--check", action="store_true", help="only check that every edit applies")
    ap.add_argument("--packets", type=int, default=8192, help="N: callgrind runs of N and 2N")
    ap.add_argument("--keep", action="store_true", help="keep the copy and its build")
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    if a.check:
        return check(src)
    if not a.out:
        ap.error("--out is needed unless --check")
    if shutil.which("valgrind") is None:
        sys.exit("floor: valgrind is needed (scripts/setup-deps.sh installs it)")
    if check(src) != 0:
        return 1
    work = tempfile.mkdtemp(prefix="ringway-floor.")
    try:
        tree, build = os.path.join(work, "src"), os.path.join(work, "build")
        copy_tree(src, tree)
        run(["meson", "setup", build, tree, "--buildtype=release", "-Dbench=true",
             "-Dwerror=false"],  # a stripped step may leave a helper unused
            os.path.join(work, "setup.log"))
        target = "tests/bench/dataplane/bench_dataplane"
        bench = os.path.join(build, target)
        rows = []

        def row(name, what, r, offload=False):
            prev = rows[-1] if rows and not offload else None
            rows.append({
                "step": name, "removed": what, "offload": offload,
                "forward": r["forward"], "reply": r["reply"],
                "forward_delta": round(r["forward"] - prev["forward"], 1) if prev else None,
                "reply_delta": round(r["reply"] - prev["reply"], 1) if prev else None,
            })

        run(["ninja", "-C", build, target], os.path.join(work, "build.as_built.log"))
        base = measure(bench, work, "as_built", a.packets)
        row("as_built", "nothing: the code as it is", base)
        base_off = measure(bench, work, "as_built", a.packets, offload=True)
        for step in STEPS:
            apply_step(tree, step)
            run(["ninja", "-C", build, target], os.path.join(work, "build.%s.log" % step[0]))
            row(step[0], step[1], measure(bench, work, step[0], a.packets))
        floor = rows[-1]
        floor_off = measure(bench, work, "floor", a.packets, offload=True)
        row("as_built_offload", "the software checksums (NIC offloads), nothing else",
            base_off, offload=True)
        row("floor_offload", "every step above and the software checksums (NIC offloads)",
            floor_off, offload=True)
        doc = {
            "benchmark": "floor",
            "packets": a.packets,
            "workload": "bench_dataplane --only forward|reply: stage c, mixed protocols, "
                        "1,000 x 160 ring",
            "targets": TARGETS,
            "steps": rows,
            "summary": {
                "as_built": base, "floor": {"forward": floor["forward"], "reply": floor["reply"]},
                "floor_offload": floor_off,
                "floor_offload_to_target": {
                    s: round(floor_off[s] / TARGETS[s], 3) for s in TARGETS},
                "features_share": {
                    s: round(1 - floor[s] / base[s], 3) for s in TARGETS},
            },
        }
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print("floor: %s" % a.out)
    finally:
        if a.keep:
            print("floor: kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
