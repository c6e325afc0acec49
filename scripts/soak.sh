#!/usr/bin/env bash
# Run the consistency checker (tests/e2e/test_consistency.py) on seed after seed for as long
# as asked, and write one JSON report: every seed, its operations, its faults by kind, and
# every finding with its replay command line (and, with --verify-replay, whether the shrunk
# replay showed a finding again).
#
#   scripts/soak.sh [--minutes M] [--seconds S] [--faults KIND,...] [--routers R] [--seed-base N]
#                   [--report FILE] [--build DIR] [--verify-replay] [--keep DIR]
#
#   --minutes M      run new seeds until M minutes have passed (default 60); the seed that
#                    is running then finishes
#   --seconds S      length of each seed's run (default 90; about 40 s of setup and checks
#                    come on top)
#   --faults K,...   fault kinds to draw from (default: every kind; see --list-kinds of the
#                    checker)
#   --routers R      1 (default) or 2: fleet mode, two routers on etcd (see the checker)
#   --seed-base N    the first seed (default: the current Unix time); then N+1, N+2, ...
#   --report FILE    the JSON report (default bench-results/soak.json)
#   --build DIR      the build directory with app/ringway/ringway (default build)
#   --verify-replay  after a seed with findings, run its shrunk replay once and record
#                    whether it found something again
#   --keep DIR       keep each seed's own JSON and log in DIR (default: a temporary folder,
#                    removed at the end)
#
# Needs root (the sandbox's namespaces). Each seed's sandbox has a prefix of its own and is
# torn down by the checker on every exit path; Ctrl-C stops the running seed (the checker
# tears its sandbox down) and writes the report of the seeds done so far.
# Exit status: 0 no finding and no failed check in any seed, 1 otherwise, 2 usage.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
minutes=60
seconds=90
faults=""
routers=1
seed_base=$(date +%s)
report=$top/bench-results/soak.json
build=$top/build
verify=0
keep=""
die() { echo "soak.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--faults) faults=$2; shift 2 ;;
	--routers) routers=$2; shift 2 ;;
	--seed-base) seed_base=$2; shift 2 ;;
	--report) report=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--verify-replay) verify=1; shift ;;
	--keep) keep=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[[ $minutes =~ ^[0-9]+$ ]] || die "--minutes must be a number"
[[ $seconds =~ ^[0-9]+$ ]] && [ "$seconds" -ge 20 ] || die "--seconds must be a number >= 20"
[[ $seed_base =~ ^[0-9]+$ ]] || die "--seed-base must be a number"
[[ $routers =~ ^[12]$ ]] || die "--routers must be 1 or 2"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
checker=$top/tests/e2e/test_consistency.py
[ -x "$build/app/ringway/ringway" ] || die "$build/app/ringway/ringway not built"
[ -n "$faults" ] || faults=$(python3 "$checker" --list-kinds)
export RINGWAY=$build/app/ringway/ringway RINGWAYCTL=$build/app/ringwayctl/ringwayctl
export RINGWAY_SYNC=$build/app/ringway-sync/ringway-sync
export SANDBOX=$top/scripts/sandbox.sh PYTHONDONTWRITEBYTECODE=1
if [ -n "$keep" ]; then
	mkdir -p "$keep" || die "cannot make $keep"
	dir=$keep
else
	dir=$(mktemp -d /tmp/ringway-soak.XXXXXX)
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$(dirname "$report")"

stop=0
child=""
on_int() {
	stop=1
	# the checker tears its own sandbox down on SIGINT; stop only the process we started
	[ -n "$child" ] && kill -INT "$child" 2>/dev/null
}
trap on_int INT TERM

deadline=$(( $(date +%s) + minutes * 60 ))
seed=$seed_base
n=0
echo "soak: seeds from $seed_base, ${seconds} s each, for $minutes min; faults $faults"
while [ "$stop" = 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do
	out=$dir/seed-$seed.json
	log=$dir/seed-$seed.log
	python3 "$checker" --seed "$seed" --seconds "$seconds" --faults "$faults" \
		--routers "$routers" --json-out "$out" >"$log" 2>&1 &
	child=$!
	wait "$child"
	rc=$?
	child=""
	[ -f "$out" ] || echo "{\"seed\": $seed, \"error\": \"exit $rc, no report\"}" >"$out"
	echo "seed $seed: exit $rc ($(grep -c '^FINDING' "$log") finding lines)"
	if [ "$verify" = 1 ] && [ "$rc" = 1 ] && [ "$stop" = 0 ]; then
		# The shrunk replay's schedule and length, from the seed's own report.
		spec=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r.get("replay_shrunk") or ""; print(s.split("--schedule ")[1].split(" ")[0].strip("'"'"'") if "--schedule" in s else "")' "$out")
		secs=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r.get("replay_shrunk") or ""; print(s.split("--seconds ")[1].split()[0] if "--seconds" in s else "")' "$out")
		if [ -n "$secs" ]; then
			python3 "$checker" --seed "$seed" --seconds "$secs" --schedule "$spec" \
				--routers "$routers" --json-out "$dir/replay-$seed.json" >"$dir/replay-$seed.log" 2>&1 &
			child=$!
			wait "$child"
			rrc=$?
			child=""
			echo "seed $seed: shrunk replay exit $rrc"
		fi
	fi
	n=$((n + 1))
	seed=$((seed + 1))
done

python3 - "$dir" "$report" "$seed_base" "$seconds" "$faults" <<'EOF'
import glob, json, os, sys
d, report, base, seconds, faults = sys.argv[1:]
seeds, ops, kinds, findings = [], {}, {}, []
by_kind_findings = {}
for p in sorted(glob.glob(os.path.join(d, "seed-*.json")),
                key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0])):
    r = json.load(open(p))
    seed = r.get("seed")
    rp = os.path.join(d, "replay-%s.json" % seed)
    replayed = None
    if os.path.exists(rp):
        replayed = bool(json.load(open(rp)).get("findings"))
    fs = r.get("findings", [])
    seeds.append({"seed": seed, "run_s": r.get("run_s"), "wall_s": r.get("wall_s"),
                  "operations": sum(v for k, v in r.get("operations", {}).items()
                                    if k in ("get", "multiget", "set", "delete")),
                  "faults": r.get("faults", {}), "findings": len(fs),
                  "checks_failed": r.get("checks_failed", []), "error": r.get("error"),
                  "shrunk_replay_found_again": replayed})
    for k, v in r.get("operations", {}).items():
        ops[k] = ops.get(k, 0) + v
    for k, v in r.get("faults", {}).items():
        kinds[k] = kinds.get(k, 0) + v
    for f in fs:
        f = dict(f, seed=seed, replay=r.get("replay"), replay_shrunk=r.get("replay_shrunk"))
        findings.append(f)
        for a in f.get("faults_active") or ["(none active)"]:
            k = a.split("@")[0]
            by_kind_findings[k] = by_kind_findings.get(k, 0) + 1
out = {"seed_base": int(base), "seconds_per_seed": int(seconds),
       "operations_total": sum(s["operations"] for s in seeds), "faults_enabled":
       faults.split(","), "seeds_run": len(seeds),
       "seeds_with_findings": sum(1 for s in seeds if s["findings"] or s["error"]),
       "seeds_failed": sum(1 for s in seeds if s["checks_failed"] or s["error"]),
       "operations": ops, "faults_by_kind": kinds,
       "findings_by_active_fault_kind": by_kind_findings, "findings": findings[:500],
       "findings_total": len(findings), "seeds": seeds}
with open(report, "w") as f:
    json.dump(out, f, indent=1)
print("soak: %d seeds, %d with findings, %d findings; report %s" % (
    len(seeds), out["seeds_with_findings"], len(findings), report))
sys.exit(1 if out["seeds_failed"] else 0)
EOF
