#!/usr/bin/env bash
# Build ringway optimised and run its benchmarks; each section writes bench-results/<name>.json.
#   scripts/bench.sh [SECTION...]      (no SECTION: every section)
# Sections: see SECTIONS below. A section is a function `section_<name>` that runs a benchmark
# from "$build" and writes "$results/<name>.json", plus the ninja targets it needs in
# `targets_<name>` (only those are built, so one broken benchmark does not stop the others).
#
# Environment:
#   RINGWAY_BENCH_BUILD       build directory (default build-bench, buildtype=release)
#   RINGWAY_BENCH_MESON_ARGS  extra meson setup arguments (e.g. -Ddpdk=disabled)
#   RINGWAY_BENCH_SKIP_DEPS=1 do not run scripts/setup-deps.sh first
#   dataplane: RINGWAY_BENCH_DP_RUNS (runs of bench_dataplane, median taken; default 5),
#     RINGWAY_BENCH_DP_PACKETS (packets per case and run, default 131072),
#     RINGWAY_BENCH_CG_PACKETS (N of the callgrind runs with N and 2N packets, default 8192)
#   sandbox (root): RINGWAY_BENCH_SECONDS (each memcaslap run, default 10), RINGWAY_BENCH_ROUNDS
#     (rounds of the four memcaslap runs, median taken; default 3), RINGWAY_BENCH_PREFIX
#     (sandbox prefix, default bench), RINGWAY_BENCH_CONCURRENCY (memcaslap -c, default 8),
#     RINGWAY_BENCH_RATE (ringway-loadgen paced rate, default 5000/s)
#   floor: RINGWAY_BENCH_CG_PACKETS as for dataplane
#   linerate: RINGWAY_BENCH_LR_TRIAL (seconds per trial, default 1), RINGWAY_BENCH_LR_REPEAT
#     (trials per rate, all must pass; default 1), RINGWAY_BENCH_LR_WORKERS (default 1,2),
#     RINGWAY_BENCH_LR_CASES (default: every case of tests/bench/linerate/linerate.py),
#     RINGWAY_BENCH_LR_GENERATOR_ONLY (0: no generator-only loopback case; default 1)
#   idle (root): RINGWAY_BENCH_IDLE_SECONDS (each ringway-loadgen run, default 8),
#     RINGWAY_BENCH_IDLE_ROUNDS (rounds, default 3), RINGWAY_BENCH_IDLE_RATE (default 5000/s),
#     RINGWAY_BENCH_IDLE_MODES (default "backoff adaptive poll"), RINGWAY_BENCH_IDLE_PREFIX
#     (sandbox prefix, default benchidle)
#   hotkeys (root): RINGWAY_BENCH_HK_SECONDS (each measured run, default 12),
#     RINGWAY_BENCH_HK_RATE (ringway-loadgen rate, default 8000/s), RINGWAY_BENCH_HK_SKEWS
#     (default "0.99 1.2"), RINGWAY_BENCH_HK_PREFIX (sandbox prefix, default benchhk)
#   scaleout (root): RINGWAY_BENCH_SO_SECONDS (each run's measured load, default 60; the add is
#     at RINGWAY_BENCH_SO_ADD_AT, default 10), RINGWAY_BENCH_SO_RATE (default 5000/s),
#     RINGWAY_BENCH_SO_KEYS (default 20000), RINGWAY_BENCH_SO_DIST (uniform or zipf:S, default
#     uniform), RINGWAY_BENCH_SO_PREFIX (sandbox prefix, default benchso)
# Figures on a shared 2-core machine move by 10-25% between runs: compare ratios within a run.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${RINGWAY_BENCH_BUILD:-build-bench}
results=$top/bench-results

# --- sections ------------------------------------------------------------------------------
SECTIONS=(placement dataplane floor sandbox linerate hotkeys scaleout idle)

# Placement lookups (ns, index vs binary search vs libmemcached), build time and memory at
# 10 / 100 / 1,000 / 10,000 members for every algorithm.
targets_placement=(tests/bench/placement/bench_placement)
section_placement() {
	"$build/tests/bench/placement/bench_placement" --out "$results/placement.json"
}

# The worker code's cost per packet (tests/bench/dataplane): TSC cycles for parse, parse +
# placement, forward and reply (and forward + reply over IPv6, beside IPv4's) on a 1,000-node x 160-vnode ring (and a 10-node one, to show
# what the big ring's cache misses cost), 1 and 2 workers; the median of RINGWAY_BENCH_DP_RUNS
# runs; instructions and simulated L2 misses per packet for forward and reply from callgrind
# (runs of N and 2N packets, difference / N) with the functions they go to; the same for a
# reply that lands on the other worker (hand-off: worker 1 hands it over, worker 0 returns it).
targets_dataplane=(tests/bench/dataplane/bench_dataplane)
section_dataplane() {
	local bin=$build/tests/bench/dataplane/bench_dataplane raw=$results/raw/dataplane i st m
	local runs=${RINGWAY_BENCH_DP_RUNS:-5} n=${RINGWAY_BENCH_DP_PACKETS:-131072}
	local cgn=${RINGWAY_BENCH_CG_PACKETS:-8192}
	rm -rf "$raw"
	mkdir -p "$raw"
	for i in $(seq 1 "$runs"); do
		"$bin" --packets "$n" --scaling --json "$raw/run$i.json" 2>"$raw/run$i.txt" || {
			cat "$raw/run$i.txt" >&2
			return 1
		}
		# The same on a 10-node ring (its index fits the L1/L2 caches): how much of the
		# placement cost is the big ring's cache misses.
		"$bin" --packets "$n" --nodes 10 --json "$raw/small$i.json" \
			2>"$raw/small$i.txt" || {
			cat "$raw/small$i.txt" >&2
			return 1
		}
	done
	if command -v valgrind >/dev/null; then
		# The cache simulation's last level set to this CPU's L2 (per core), so "LL" read
		# misses estimate L2 misses per packet; instruction counts do not depend on it.
		local c2=/sys/devices/system/cpu/cpu0/cache/index2 l2=524288,8,64 sz
		if [ -r "$c2/size" ] && [ "$(cat "$c2/level")" = 2 ]; then
			sz=$(cat "$c2/size")
			case $sz in
			*K) sz=$((${sz%K} * 1024)) ;;
			*M) sz=$((${sz%M} * 1048576)) ;;
			esac
			l2=$sz,$(cat "$c2/ways_of_associativity"),$(cat "$c2/coherency_line_size")
		fi
		echo "$l2" >"$raw/cg.l2"
		# forward6 / reply6: the same stages over IPv6 (--ipv6), reported beside IPv4's.
		for st in forward reply handoff forward6 reply6; do
			local only=${st%6} v6=
			[ "$only" != "$st" ] && v6=--ipv6
			for m in 1 2; do
				# shellcheck disable=SC2086
				valgrind --tool=callgrind --collect-atstart=no \
					--toggle-collect=timed_polls --cache-sim=yes \
					--D1=32768,8,64 --LL="$l2" \
					--callgrind-out-file="$raw/cg.$st.$m.out" \
					"$bin" --only "$only" $v6 --packets $((m * cgn)) --workers 1 \
					>"$raw/cg.$st.$m.json" 2>"$raw/cg.$st.$m.log" || {
					tail -20 "$raw/cg.$st.$m.log" >&2
					return 1
				}
				callgrind_annotate --threshold=100 --show=Ir "$raw/cg.$st.$m.out" \
					>"$raw/cg.$st.$m.txt" || return 1
				callgrind_annotate --threshold=100 --show=DLmr --sort=DLmr \
					"$raw/cg.$st.$m.out" >"$raw/cg.$st.$m.l2.txt" || return 1
			done
		done
	else
		echo "bench: valgrind not installed: no instruction counts" >&2
	fi
	python3 tests/bench/dataplane/report.py dataplane --raw "$raw" --callgrind-packets "$cgn" \
		--out "$results/dataplane.json"
}

# The floor under the forward and reply paths' instructions (tests/bench/floor/floor.py):
# a copy of the tree built with the router's optional checks and features compiled out one
# after the other (client ACL, hot keys, warm-up, node health, latency histograms, the reply's
# origin checks, VLANs, IPv6), callgrind's instructions per packet after each, and the last
# with a NIC's checksum offloads. About 3 minutes; needs valgrind. bench-results/floor.json.
targets_floor=(tests/bench/dataplane/bench_dataplane) # the tree as it is compiles
section_floor() {
	python3 tests/bench/floor/floor.py --src "$top" --out "$results/floor.json" \
		--packets "${RINGWAY_BENCH_CG_PACKETS:-8192}"
}

# The same load straight at one memcached node, through ringway and through twemproxy, in the
# namespace sandbox (root): memcaslap for every side (-U for UDP, TCP for nutcracker), rounds
# interleaved, medians; ringway-loadgen for the UDP sides' latency percentiles; CPU seconds of
# the proxy process per million requests from /proc/PID/stat. Writes sandbox.json and
# sandbox.png; tears everything down on exit, also on failure.
targets_sandbox=(app/ringway/ringway app/ringway-loadgen/ringway-loadgen)
sb_prefix=${RINGWAY_BENCH_PREFIX:-bench}
sb_twem_ns=$sb_prefix-twem
sb_twem_ip=198.18.0.3
sb_twem_port=22121
sb_lg_src=198.18.0.20
sb_twem_pid=

sb() { bash "$top/scripts/sandbox.sh" "$@" --prefix "$sb_prefix"; }

# "utime stime" of PID in clock ticks (fields 14 and 15 of /proc/PID/stat, after the comm);
# "0 0" when there is no such process.
cpu_us() {
	local rest
	rest=$(cat "/proc/${1:-none}/stat" 2>/dev/null) || { echo "0 0"; return; }
	rest=${rest##*) }
	# shellcheck disable=SC2086
	set -- $rest
	echo "${12} ${13}"
}

# utime + stime of PID in clock ticks.
cpu_ticks() {
	local u s
	read -r u s < <(cpu_us "$1")
	echo $((u + s))
}

# The memcached nodes' pids, space-separated.
node_pids() {
	local i
	for i in $(seq 1 "$NODES"); do cat "$STATE_DIR/node$i.pid"; done | tr '\n' ' '
}

sum_ticks() {
	local p t=0
	for p in "$@"; do t=$((t + $(cpu_ticks "$p"))); done
	echo "$t"
}

sandbox_teardown() {
	if [ -n "$sb_twem_pid" ]; then
		kill -TERM "$sb_twem_pid" 2>/dev/null || true
		wait "$sb_twem_pid" 2>/dev/null || true
		sb_twem_pid=
	fi
	ip netns del "$sb_twem_ns" 2>/dev/null || true
	sb down >/dev/null 2>&1 || true
	rm -rf "/var/run/dpdk/$sb_prefix-lg" # the load generator's runtime folder
}

# twemproxy in a namespace of its own on the sandbox's bridge, with a kernel address (it is a
# socket proxy), ketama over the same nodes.
twem_start() {
	local fab=$NS_FABRIC i ip t pids
	# A leftover of a killed run: its nutcracker (started by this script) and namespace.
	if ip netns list | grep -q "^$sb_twem_ns\b"; then
		pids=$(ip netns pids "$sb_twem_ns" 2>/dev/null || true)
		# shellcheck disable=SC2086
		[ -z "$pids" ] || kill -TERM $pids 2>/dev/null || true
		ip netns del "$sb_twem_ns"
	fi
	ip netns add "$sb_twem_ns"
	ip -n "$sb_twem_ns" link set lo up
	ip -n "$fab" link add tw0 type veth peer name veth0 netns "$sb_twem_ns"
	ip -n "$fab" link set tw0 master br0
	ip -n "$fab" link set tw0 up
	ip -n "$sb_twem_ns" link set veth0 up
	ip -n "$sb_twem_ns" addr add "$sb_twem_ip/15" dev veth0
	{
		echo "bench:"
		echo "  listen: $sb_twem_ip:$sb_twem_port"
		echo "  hash: fnv1a_64"
		echo "  distribution: ketama"
		echo "  timeout: 2000"
		echo "  auto_eject_hosts: false"
		echo "  servers:"
		for i in $(seq 1 "$NODES"); do
			ip=NODE${i}_IP
			echo "   - ${!ip}:$MC_PORT:1 node$i"
		done
	} >"$raw/nutcracker.yml"
	ip netns exec "$sb_twem_ns" nutcracker -c "$raw/nutcracker.yml" -s 22222 -a "$sb_twem_ip" \
		-i 1000 -o "$raw/nutcracker.log" -p "$raw/nutcracker.pid" &
	sb_twem_pid=$!
	for t in $(seq 1 50); do
		ip netns exec "$NS_CLIENT" bash -c "exec 3<>/dev/tcp/$sb_twem_ip/$sb_twem_port &&
			printf 'set twwarm 0 0 2\r\nok\r\n' >&3 && read -r -t 2 l <&3 &&
			[[ \$l == STORED* ]]" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "bench: nutcracker does not answer at $sb_twem_ip:$sb_twem_port" >&2
	return 1
}

# memcaslap_run NAME SERVER [-U]: one timed run, with the CPU ticks of the router, nutcracker
# and the nodes around it, into $raw/NAME.{txt,meta}.
memcaslap_run() {
	local name=$1 server=$2 udp=${3:-} ru0 rs0 tu0 ts0 ru1 rs1 tu1 ts1 n0 w0 w1 la
	read -r la _ </proc/loadavg
	read -r ru0 rs0 < <(cpu_us "$router_pid")
	read -r tu0 ts0 < <(cpu_us "$sb_twem_pid")
	# shellcheck disable=SC2046
	n0=$(sum_ticks $(node_pids))
	w0=$(date +%s.%N)
	# memcaslap stalls ~30 s per lost UDP datagram: bound the run anyway.
	# shellcheck disable=SC2086
	timeout $((secs + 60)) ip netns exec "$NS_CLIENT" memcaslap -s "$server" $udp \
		-F "$raw/memcaslap.cnf" -t "${secs}s" -T 1 -c "$conc" -w 4k -S "${secs}s" \
		>"$raw/$name.txt" 2>&1 || true
	w1=$(date +%s.%N)
	read -r ru1 rs1 < <(cpu_us "$router_pid")
	read -r tu1 ts1 < <(cpu_us "$sb_twem_pid")
	# shellcheck disable=SC2046
	{
		echo "tool=memcaslap"
		echo "loadavg_1min=$la"
		echo "wall_s=$(awk -v a="$w0" -v b="$w1" 'BEGIN { print b - a }')"
		echo "router_ticks=$((ru1 + rs1 - ru0 - rs0))"
		echo "router_sys_ticks=$((rs1 - rs0))"
		echo "twem_ticks=$((tu1 + ts1 - tu0 - ts0))"
		echo "twem_sys_ticks=$((ts1 - ts0))"
		echo "node_ticks=$(($(sum_ticks $(node_pids)) - n0))"
	} >"$raw/$name.meta"
}

# loadgen_run NAME DST ARGS...: ringway-loadgen on the client's veth (af_packet).
loadgen_run() {
	local name=$1 dst=$2 ru0 rs0 ru1 rs1 n0 la
	shift 2
	read -r la _ </proc/loadavg
	read -r ru0 rs0 < <(cpu_us "$router_pid")
	# shellcheck disable=SC2046
	n0=$(sum_ticks $(node_pids))
	timeout 120 ip netns exec "$NS_CLIENT" "$build/app/ringway-loadgen/ringway-loadgen" \
		--no-huge -m 256 --no-pci --no-shconf --file-prefix "$sb_prefix-lg" \
		--vdev net_af_packet0,iface="$CLIENT_IF",framecnt=4096 -- --src "$sb_lg_src" \
		--dst "$dst" --arp --idle-us 20 --keys 10000 --get-ratio 0.9 --value-size 100 \
		--quiet --json "$raw/$name.json" "$@" >"$raw/$name.log" 2>&1 || {
		tail -5 "$raw/$name.log" >&2
		return 1
	}
	read -r ru1 rs1 < <(cpu_us "$router_pid")
	# shellcheck disable=SC2046
	{
		echo "tool=ringway-loadgen"
		echo "loadavg_1min=$la"
		echo "router_ticks=$((ru1 + rs1 - ru0 - rs0))"
		echo "router_sys_ticks=$((rs1 - rs0))"
		echo "node_ticks=$(($(sum_ticks $(node_pids)) - n0))"
	} >"$raw/$name.meta"
}

section_sandbox() {
	local rc=0
	section_sandbox_run || rc=$?
	sandbox_teardown
	trap - EXIT INT TERM
	return "$rc"
}

section_sandbox_run() {
	local raw=$results/raw/sandbox conf round lsecs
	local secs=${RINGWAY_BENCH_SECONDS:-10} rounds=${RINGWAY_BENCH_ROUNDS:-3}
	local conc=${RINGWAY_BENCH_CONCURRENCY:-8} rate=${RINGWAY_BENCH_RATE:-5000}
	local router_pid
	[ "$(id -u)" -eq 0 ] || { echo "bench: sandbox needs root" >&2; return 1; }
	rm -rf "$raw"
	mkdir -p "$raw"
	trap 'sandbox_teardown' EXIT
	trap 'exit 130' INT TERM
	sb up --nodes 4 || return 1
	# shellcheck disable=SC1090,SC1091
	. "/run/ringway-sandbox/$sb_prefix/env"
	cat >"$raw/memcaslap.cnf" <<'EOF'
key
32 64 1
value
100 100 1
cmd
0 0.1
1 0.9
EOF
	twem_start || return 1
	# ringway the way scripts/demo.sh starts it: the sandbox's config, router-start (af_packet,
	# lcores 0-1: a control lcore and one worker, idle = backoff).
	conf=$raw/ringway.conf
	sb config >"$conf" || return 1
	sb router-start --ringway "$build/app/ringway/ringway" --config "$conf" || return 1
	router_pid=$(cat "$STATE_DIR/router.pid")
	python3 - "$ROUTER_IP" "$NS_CLIENT" <<'EOF' || return 1
import sys, time
sys.path.insert(0, "tests/e2e/clients")
from mcudp import UdpClient, Timeout
c = UdpClient((sys.argv[1], 11211), ns=sys.argv[2], timeout=0.3)
ok, i, end = 0, 0, time.monotonic() + 10
while ok < 40 and time.monotonic() < end:
    i += 1
    try:
        if c.request(b"set warmup:%d 0 0 2\r\nok\r\n" % i) == b"STORED\r\n":
            ok += 1
    except Timeout:
        time.sleep(0.1)
print("warm-up: %d sets stored through the router" % ok)
sys.exit(0 if ok >= 40 else 1)
EOF
	for round in $(seq 1 "$rounds"); do
		echo "   round $round/$rounds: memcaslap ${secs}s each: direct UDP, ringway UDP," \
			"twemproxy TCP, direct TCP"
		memcaslap_run "direct_udp.$round" "$NODE1_IP:$MC_PORT" -U
		memcaslap_run "ringway_udp.$round" "$ROUTER_IP:$MC_PORT" -U
		memcaslap_run "twemproxy_tcp.$round" "$sb_twem_ip:$sb_twem_port"
		memcaslap_run "direct_tcp.$round" "$NODE1_IP:$MC_PORT"
	done
	lsecs=$(((secs + 1) / 2 + 3))
	echo "   ringway-loadgen ${lsecs}s each: paced $rate/s and closed loop (32 in flight)," \
		"direct and through ringway"
	loadgen_run lg_direct_paced "$NODE1_IP:$MC_PORT" --preload --rate "$rate" \
		--duration "$lsecs" || return 1
	loadgen_run lg_ringway_paced "$ROUTER_IP:$MC_PORT" --preload --rate "$rate" \
		--duration "$lsecs" || return 1
	loadgen_run lg_direct_window "$NODE1_IP:$MC_PORT" --rate max --window 32 \
		--duration "$lsecs" || return 1
	loadgen_run lg_ringway_window "$ROUTER_IP:$MC_PORT" --rate max --window 32 \
		--duration "$lsecs" || return 1
	sb router-stop >"$raw/router-exit.txt" 2>&1 || true
	sandbox_teardown
	python3 tests/bench/dataplane/report.py sandbox --raw "$raw" --rounds "$rounds" \
		--clk-tck "$(getconf CLK_TCK)" --out "$results/sandbox.json" \
		--png "$results/sandbox.png"
}
# The real binary over net_memif (tests/bench/linerate): ringway with a 1,000-node config and
# one ringway-loadgen as clients and nodes; RFC 2544 zero-loss search per case (single-key
# ASCII/meta/binary GETs with 100 and 1,400-byte values, 90/10 GET/SET, 10-key multi-gets) for
# 1 and 2 workers, latency at 10/50/90% of it, replies steered across workers; before each
# case the generator alone (a generator-only loopback to a --serve node emulator, no router):
# its capacity starts the router's search and stands beside every figure
# (RINGWAY_BENCH_LR_GENERATOR_ONLY=0 skips it); next to bench_dataplane's cycles
# (dataplane.json when that section ran, else a short run).
targets_linerate=(app/ringway/ringway app/ringway-loadgen/ringway-loadgen app/ringwayctl/ringwayctl
	tests/bench/dataplane/bench_dataplane)
section_linerate() {
	local raw=$results/raw/linerate dp=()
	rm -rf "$raw"
	mkdir -p "$raw"
	[ ! -f "$results/dataplane.json" ] || dp=(--dataplane-json "$results/dataplane.json")
	python3 tests/bench/linerate/linerate.py --build "$build" --raw "$raw" \
		--out "$results/linerate.json" --png "$results/linerate.png" \
		--trial "${RINGWAY_BENCH_LR_TRIAL:-1}" --repeat "${RINGWAY_BENCH_LR_REPEAT:-1}" \
		--workers "${RINGWAY_BENCH_LR_WORKERS:-1,2}" \
		${RINGWAY_BENCH_LR_CASES:+--cases "$RINGWAY_BENCH_LR_CASES"} "${dp[@]}" \
		$([ "${RINGWAY_BENCH_LR_GENERATOR_ONLY:-1}" != 0 ] || echo --no-generator-only)
}

# Latency at low load per idle mode (docs/performance.md, "Idle modes and latency at low
# load"): in the sandbox, ringway-loadgen paced at RINGWAY_BENCH_IDLE_RATE straight at one node
# and through
# ringway restarted with each `idle` mode, rounds interleaved; its latency percentiles, and the
# CPU the router used during the run: the worker thread's (/proc/PID/task/TID/stat of the
# lcore-worker thread) and the whole process's. Writes idle.json; tears the sandbox down.
targets_idle=(app/ringway/ringway app/ringway-loadgen/ringway-loadgen)
section_idle() {
	local rc=0
	sb_prefix=${RINGWAY_BENCH_IDLE_PREFIX:-benchidle}
	section_idle_run || rc=$?
	sandbox_teardown
	trap - EXIT INT TERM
	return "$rc"
}

# The TID of PID's first DPDK worker lcore thread ("lcore-worker-N"), or nothing.
worker_tid() {
	local t
	for t in /proc/"$1"/task/*; do
		if grep -q worker "$t/comm" 2>/dev/null; then
			echo "${t##*/}"
			return
		fi
	done
}

section_idle_run() {
	local raw=$results/raw/idle secs=${RINGWAY_BENCH_IDLE_SECONDS:-8}
	local rounds=${RINGWAY_BENCH_IDLE_ROUNDS:-3} rate=${RINGWAY_BENCH_IDLE_RATE:-5000}
	local modes=${RINGWAY_BENCH_IDLE_MODES:-backoff adaptive poll}
	local router_pid tid round mode w0 w1
	[ "$(id -u)" -eq 0 ] || { echo "bench: idle needs root" >&2; return 1; }
	rm -rf "$raw"
	mkdir -p "$raw"
	trap 'sandbox_teardown' EXIT
	trap 'exit 130' INT TERM
	sb up --nodes 4 || return 1
	# shellcheck disable=SC1090,SC1091
	. "/run/ringway-sandbox/$sb_prefix/env"
	sb config >"$raw/base.conf" || return 1
	for round in $(seq 1 "$rounds"); do
		echo "   round $round/$rounds: ringway-loadgen ${secs}s at $rate/s: direct, then" \
			"through ringway with idle = $modes"
		router_pid=
		loadgen_run "lg_direct.$round" "$NODE1_IP:$MC_PORT" --preload --rate "$rate" \
			--duration "$secs" || return 1
		for mode in $modes; do
			sed "s/^idle = .*/idle = $mode/" "$raw/base.conf" >"$raw/ringway.$mode.conf"
			sb router-start --ringway "$build/app/ringway/ringway" \
				--config "$raw/ringway.$mode.conf" >/dev/null || return 1
			router_pid=$(cat "$STATE_DIR/router.pid")
			tid=$(worker_tid "$router_pid")
			w0=$(cpu_ticks "$router_pid/task/${tid:-none}")
			loadgen_run "lg_$mode.$round" "$ROUTER_IP:$MC_PORT" --preload \
				--rate "$rate" --duration "$secs" || return 1
			w1=$(cpu_ticks "$router_pid/task/${tid:-none}")
			echo "worker_ticks=$((w1 - w0))" >>"$raw/lg_$mode.$round.meta"
			sb router-stop >"$raw/router-exit.$mode.$round.txt" 2>&1 || true
		done
	done
	sandbox_teardown
	python3 - "$raw" "$rounds" "$(getconf CLK_TCK)" "$results/idle.json" $modes <<'PYEOF'
import json, statistics, sys
raw, rounds, hz, out, modes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], \
    sys.argv[5:]
def load(name, r):
    with open("%s/%s.%d.json" % (raw, name, r)) as f:
        run = json.load(f)
    meta = {}
    try:
        with open("%s/%s.%d.meta" % (raw, name, r)) as f:
            meta = dict(l.strip().split("=", 1) for l in f if "=" in l)
    except OSError:
        pass
    return run, meta
doc = {"benchmark": "idle", "rounds": rounds, "statistic": "median over rounds", "setups": {}}
for name in ["lg_direct"] + ["lg_" + m for m in modes]:
    rows = []
    for r in range(1, rounds + 1):
        lg, meta = load(name, r)
        run = lg["run"]
        lat = run["latency_us"]
        e = {k: lat[k] for k in ("p50", "p99", "p99.9")}
        e["lost"] = run["lost"]
        e["replies"] = run["replies"]
        e["elapsed_s"] = run["elapsed_s"]
        e["loadavg_1min"] = float(meta.get("loadavg_1min", "nan"))
        if "worker_ticks" in meta:
            e["worker_cpu_s"] = int(meta["worker_ticks"]) / hz
            e["router_cpu_s"] = int(meta["router_ticks"]) / hz
        rows.append(e)
    med = {k: statistics.median(x[k] for x in rows)
           for k in rows[0] if k not in ("lost", "replies")}
    med["lost"] = sum(x["lost"] for x in rows)
    doc["setups"][name[3:]] = {"median": med, "rounds": rows}
d = doc["setups"]["direct"]["median"]
print("%-10s %9s %9s %11s %11s %12s %12s" % ("setup", "p50 us", "p99 us", "+p50/direct",
                                              "+p99/direct", "worker CPU s", "router CPU s"))
for k, v in doc["setups"].items():
    m = v["median"]
    v["p99_over_direct"] = round(m["p99"] / d["p99"], 2) if d["p99"] else None
    print("%-10s %9.0f %9.0f %11.2f %11.2f %12s %12s" % (
        k, m["p50"], m["p99"], m["p50"] / d["p50"], m["p99"] / d["p99"],
        "%.2f" % m["worker_cpu_s"] if "worker_cpu_s" in m else "-",
        "%.2f" % m["router_cpu_s"] if "router_cpu_s" in m else "-"))
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
PYEOF
}

# Hot keys (docs/hotkeys.md): ringway-loadgen with zipf popularity over 8 memcached nodes,
# spreading off (threshold_pct 0) and on, per skew: each node's requests from its own `stats`
# (cmd_get + cmd_set + deletes, before and after the measured run), max/mean, the client's hit
# ratio, the requests the nodes got beyond the client's, the hot-key view's recall of the true
# top 10 (keys lg:0000..lg:0009: the loadgen's zipf ranks). Writes hotkeys.json and
# hotkeys.png; tears the sandbox down on exit, also on failure.
targets_hotkeys=(app/ringway/ringway app/ringway-loadgen/ringway-loadgen app/ringwayctl/ringwayctl)
section_hotkeys() {
	local rc=0
	sb_prefix=${RINGWAY_BENCH_HK_PREFIX:-benchhk}
	section_hotkeys_run || rc=$?
	sandbox_teardown
	trap - EXIT INT TERM
	return "$rc"
}

# hk_node_stats FILE: every node's `stats` (TCP, from the client namespace) as JSON.
hk_node_stats() {
	ip netns exec "$NS_CLIENT" python3 - "$NODES" >"$1" <<'EOF'
import json, socket, sys
out = {}
for i in range(1, int(sys.argv[1]) + 1):
    s = socket.create_connection(("198.18.1.%d" % i, 11211), timeout=5)
    s.sendall(b"stats\r\n")
    buf = b""
    while not buf.endswith(b"END\r\n"):
        buf += s.recv(65536)
    s.close()
    out["node%d" % i] = {l.split()[1]: l.split()[2] for l in buf.decode().splitlines()
                         if l.startswith("STAT ")}
json.dump(out, sys.stdout)
EOF
}

section_hotkeys_run() {
	local raw=$results/raw/hotkeys secs=${RINGWAY_BENCH_HK_SECONDS:-12}
	local rate=${RINGWAY_BENCH_HK_RATE:-8000} skews=${RINGWAY_BENCH_HK_SKEWS:-0.99 1.2}
	local router_pid skew mode thr conf ctl view
	[ "$(id -u)" -eq 0 ] || { echo "bench: hotkeys needs root" >&2; return 1; }
	rm -rf "$raw"
	mkdir -p "$raw"
	trap 'sandbox_teardown' EXIT
	trap 'exit 130' INT TERM
	sb up --nodes 8 || return 1
	# shellcheck disable=SC1090,SC1091
	. "/run/ringway-sandbox/$sb_prefix/env"
	sb config >"$raw/base.conf" || return 1
	ctl="$build/app/ringwayctl/ringwayctl --socket $STATE_DIR/control.sock"
	for skew in $skews; do
		for mode in off on; do
			thr=0
			[ "$mode" = on ] && thr=3
			conf=$raw/ringway.$skew.$mode.conf
			{
				cat "$raw/base.conf"
				printf '\n[hotkeys]\nsample_every = 4\ninterval_ms = 500\n'
				printf 'threshold_pct = %s\nreplicas = 8\nload_pct = 10\n' "$thr"
				printf 'fill_ttl_s = 30\n'
				# One loadgen address: on a loaded machine its requests in flight
				# may pass the per-client cap; the cap is not what is measured.
				printf '\n[tables]\nclient_slots_max = 0\n'
			} >"$conf"
			echo "   zipf $skew, spreading $mode: ${secs}s at $rate/s over $NODES nodes"
			sb router-start --ringway "$build/app/ringway/ringway" --config "$conf" ||
				return 1
			router_pid=$(cat "$STATE_DIR/router.pid")
			# Preload every key, then the same load a few seconds: the hot set settles.
			loadgen_run "warm.$skew.$mode" "$ROUTER_IP:$MC_PORT" --preload \
				--dist "zipf:$skew" --rate "$rate" --duration 4 --get-ratio 0.99 ||
				return 1
			hk_node_stats "$raw/nodes0.$skew.$mode.json" || return 1
			$ctl stats >"$raw/stats0.$skew.$mode.txt" || return 1
			# The hot-key view half-way through the measured run (a view covers the
			# last interval_ms: after the run it would be empty).
			(
				sleep $((secs / 2))
				$ctl --json hotkeys 10 >"$raw/hotkeys.$skew.$mode.json"
				$ctl hotkeys 10 >"$raw/hotkeys.$skew.$mode.txt"
			) &
			view=$!
			loadgen_run "run.$skew.$mode" "$ROUTER_IP:$MC_PORT" --dist "zipf:$skew" \
				--rate "$rate" --duration "$secs" --get-ratio 0.99 || return 1
			wait "$view" || return 1
			hk_node_stats "$raw/nodes1.$skew.$mode.json" || return 1
			$ctl stats >"$raw/stats1.$skew.$mode.txt" || return 1
			sb router-stop >"$raw/router-exit.$skew.$mode.txt" 2>&1 || true
		done
	done
	sandbox_teardown
	python3 tests/bench/hotkeys/report.py --raw "$raw" --skews "$skews" \
		--out "$results/hotkeys.json" --png "$results/hotkeys.png"
}
# Scale-out (docs/scaling.md, "Scaling out without a miss wave"): 10 memcached nodes and a
# spare; per run a fresh router over the 10 (nodes flushed, no state file), ringway-loadgen
# preloads every key
# through it, then a constant GET/SET load (90/10) with the hit ratio per 100 ms (run.series);
# ADD_AT s into the load `ringwayctl add` of the spare. Four runs: ring with warm-up
# (window_s 30), ring without, modulo without, ketama without (what a client-side ketama fleet
# sees). The router's counters (telemetry /ringway/stats) before and after each run give the
# warm-up's extra requests. Writes scaleout.json and scaleout.png; tears the sandbox down on
# exit, also on failure.
targets_scaleout=(app/ringway/ringway app/ringway-loadgen/ringway-loadgen app/ringwayctl/ringwayctl)
section_scaleout() {
	local rc=0
	sb_prefix=${RINGWAY_BENCH_SO_PREFIX:-benchso}
	section_scaleout_run || rc=$?
	so_loadgen_stop
	sandbox_teardown
	trap - EXIT INT TERM
	return "$rc"
}

so_lg_pid=
so_loadgen_stop() {
	[ -n "$so_lg_pid" ] || return 0
	kill -TERM "$so_lg_pid" 2>/dev/null || true
	wait "$so_lg_pid" 2>/dev/null || true
	so_lg_pid=
}

# so_flush: every node (the spare too) emptied, over TCP from the client namespace.
so_flush() {
	local i ip
	for i in $(seq 1 "$NODES"); do
		ip=NODE${i}_IP
		ip netns exec "$NS_CLIENT" bash -c "exec 3<>/dev/tcp/${!ip}/$MC_PORT &&
			printf 'flush_all\r\n' >&3 && read -r -t 5 l <&3 && [[ \$l == OK* ]]" ||
			{ echo "bench: flush_all on node$i failed" >&2; return 1; }
	done
}

# so_stats FILE: the router's counters that are not 0, "name value" lines.
so_stats() {
	python3 tests/e2e/clients/telemetry.py --nonzero \
		"/var/run/dpdk/$FILE_PREFIX/dpdk_telemetry.v2" /ringway/stats >"$1"
}

section_scaleout_run() {
	local raw=$results/raw/scaleout secs=${RINGWAY_BENCH_SO_SECONDS:-60}
	local add_at=${RINGWAY_BENCH_SO_ADD_AT:-10} rate=${RINGWAY_BENCH_SO_RATE:-5000}
	local keys=${RINGWAY_BENCH_SO_KEYS:-20000} dist=${RINGWAY_BENCH_SO_DIST:-uniform}
	local members=10 run algo window conf ctl t spare_addr
	[ "$(id -u)" -eq 0 ] || { echo "bench: scaleout needs root" >&2; return 1; }
	[ "$add_at" -ge 2 ] && [ "$add_at" -lt "$secs" ] ||
		{ echo "bench: scaleout: the add must fall inside the run" >&2; return 1; }
	rm -rf "$raw"
	mkdir -p "$raw"
	trap 'so_loadgen_stop; sandbox_teardown' EXIT
	trap 'exit 130' INT TERM
	sb up --nodes $((members + 1)) || return 1
	# shellcheck disable=SC1090,SC1091
	. "/run/ringway-sandbox/$sb_prefix/env"
	ctl="$build/app/ringwayctl/ringwayctl --socket $STATE_DIR/control.sock"
	spare_addr=NODE$((members + 1))_IP
	spare_addr=${!spare_addr}:$MC_PORT
	for run in ring-warmup ring modulo ketama; do
		algo=${run%-warmup}
		window=0
		[ "$run" = ring-warmup ] && window=30
		echo "   $run: $members nodes, $dist keys ($keys) at $rate/s (90% GETs) for ${secs}s," \
			"add node$((members + 1)) at ${add_at}s, warm-up window_s $window"
		so_flush || return 1
		rm -f "$STATE_DIR/state" # the last run's add is not this run's start
		conf=$raw/ringway.$run.conf
		{
			sb config --algo "$algo" --members "$members"
			printf '\n[warmup]\nwindow_s = %s\nttl_s = 300\n' "$window"
			# One loadgen address: the per-client cap is not what is measured.
			printf '\n[tables]\nclient_slots_max = 0\n'
		} >"$conf" || return 1
		sb router-start --ringway "$build/app/ringway/ringway" --config "$conf" || return 1
		python3 - "$ROUTER_IP" "$NS_CLIENT" <<'EOF' || return 1
import sys, time
sys.path.insert(0, "tests/e2e/clients")
from mcudp import UdpClient, Timeout
c = UdpClient((sys.argv[1], 11211), ns=sys.argv[2], timeout=0.3)
ok, i, end = 0, 0, time.monotonic() + 15
while ok < 100 and time.monotonic() < end:
    i += 1
    try:
        if c.request(b"set warmup:%d 0 0 2\r\nok\r\n" % i) == b"STORED\r\n":
            ok += 1
    except Timeout:
        time.sleep(0.1)
sys.exit(0 if ok >= 100 else 1)
EOF
		so_stats "$raw/stats0.$run.txt" || return 1
		# Progress lines on stderr (one a second): "loadgen run" marks the load's start.
		ip netns exec "$NS_CLIENT" "$build/app/ringway-loadgen/ringway-loadgen" \
			--no-huge -m 256 --no-pci --no-shconf --file-prefix "$sb_prefix-lg" \
			--vdev net_af_packet0,iface="$CLIENT_IF",framecnt=4096 -- --src "$sb_lg_src" \
			--dst "$ROUTER_IP:$MC_PORT" --arp --idle-us 20 --keys "$keys" \
			--get-ratio 0.9 --value-size 100 --dist "$dist" --preload --rate "$rate" \
			--duration "$secs" --series-ms 100 --json "$raw/lg.$run.json" \
			>"$raw/lg.$run.log" 2>&1 &
		so_lg_pid=$!
		for t in $(seq 1 $((keys / 200 + 120))); do
			grep -q '^loadgen run' "$raw/lg.$run.log" && break
			kill -0 "$so_lg_pid" 2>/dev/null || break
			sleep 0.5
		done
		grep -q '^loadgen run' "$raw/lg.$run.log" || {
			tail -5 "$raw/lg.$run.log" >&2
			return 1
		}
		sleep $((add_at - 1)) # the first progress line comes 1 s into the load
		$ctl --json plan add "node$((members + 1))" "$spare_addr" >"$raw/plan.$run.json" ||
			return 1
		date +%s.%N >"$raw/add.$run.unix"
		$ctl --json add "node$((members + 1))" "$spare_addr" >"$raw/add.$run.json" ||
			return 1
		wait "$so_lg_pid" || {
			so_lg_pid=
			tail -5 "$raw/lg.$run.log" >&2
			return 1
		}
		so_lg_pid=
		sleep 1
		so_stats "$raw/stats1.$run.txt" || return 1
		$ctl warmup >"$raw/warmup.$run.txt" 2>&1 || true
		sb router-stop >"$raw/router-exit.$run.txt" 2>&1 || true
	done
	sandbox_teardown
	python3 tests/bench/scaleout/report.py --raw "$raw" --runs "ring-warmup ring modulo ketama" \
		--members "$members" --dist "$dist" --rate "$rate" --keys "$keys" \
		--out "$results/scaleout.json" --png "$results/scaleout.png"
}
# --- end of sections -----------------------------------------------------------------------

usage() {
	echo "usage: $0 [SECTION...]   sections: ${SECTIONS[*]}" >&2
	exit 2
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=("${SECTIONS[@]}")
for s in "${want[@]}"; do
	case " ${SECTIONS[*]} " in
	*" $s "*) ;;
	*) echo "bench: unknown section '$s'" >&2 && usage ;;
	esac
done

if [ "${RINGWAY_BENCH_SKIP_DEPS:-0}" != 1 ]; then
	bash scripts/setup-deps.sh
fi

# shellcheck disable=SC2086 # RINGWAY_BENCH_MESON_ARGS is a list of arguments
if [ -f "$build/build.ninja" ]; then
	meson setup --reconfigure "$build" --buildtype=release -Dbench=true \
		${RINGWAY_BENCH_MESON_ARGS:-} >"$build.setup.log" 2>&1
else
	meson setup "$build" --buildtype=release -Dbench=true \
		${RINGWAY_BENCH_MESON_ARGS:-} >"$build.setup.log" 2>&1
fi || {
	cat "$build.setup.log" >&2
	exit 1
}

mkdir -p "$results"
failed=0
for s in "${want[@]}"; do
	declare -n targets="targets_$s"
	echo "== bench $s"
	if ! ninja -C "$build" -j2 "${targets[@]}"; then
		echo "bench: $s: build failed" >&2
		failed=1
		continue
	fi
	if "section_$s"; then
		echo "bench: $s -> bench-results/$s.json"
	else
		echo "bench: $s FAILED" >&2
		failed=1
	fi
	unset -n targets
done
exit $failed
