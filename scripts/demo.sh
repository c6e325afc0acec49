#!/usr/bin/env bash
# ringway demo, one command on a fresh Debian 12 machine (as root), about 1-2 minutes:
#   1. installs the Debian packages (scripts/setup-deps.sh) and builds ringway (Meson)
#   2. brings up the namespace sandbox (scripts/sandbox.sh): a client, a router namespace
#      and 4 real memcached nodes on a bridge, addresses in 198.18.0.0/15 only
#   3. measures memcaslap -U (ASCII over UDP, 90% gets, 10% sets, 100% verification)
#      directly against one node, as the baseline
#   4. starts ringway in the router namespace and runs the same memcaslap through it: on a
#      net_af_xdp port with ringway's XDP steering program when the kernel supports it (the
#      router namespace's kernel keeps ARP, ping and TCP), else on net_af_packet (it says why)
#   5. prints memcaslap's results both ways, the per-node split (router telemetry and each
#      node's own stats) and the router's counters, then tears everything down (also when a
#      step fails).
#
#   6. shows what adding a fifth node would move, per algorithm (ringway-plan compare).
#   7. live add under memcaslap load: `ringwayctl plan add` (the exact fraction that moves),
#      `ringwayctl add` of the spare node, and the fraction of 10,000 keys that really changed
#      owner (asked at the nodes), with the publish latency; warm-up is on ([warmup]
#      window_s = 30): ringway-loadgen's GET/SET load through the add shows the hit ratio per
#      100 ms before and after it, the lowest bucket, and the reads and adds the warm-up sent.
#   8. a node frozen (SIGSTOP) for a few seconds under memcaslap load: the router's detection (its log
#      line, `ringwayctl list` health), the requests its stand-in served (failover_next, the
#      nodes' get_hits), and the clean return (stale keys deleted, health up, epoch unchanged).
#
# Environment: RINGWAY_BUILD_DIR (default build-demo), DEMO_SECONDS (memcaslap run time per run,
# default 15), DEMO_NODES (default 4), DEMO_PREFIX (sandbox prefix, default demo),
# DEMO_CONCURRENCY (memcaslap -c, default 8), DEMO_PORT (auto, af_xdp or af_packet; default
# auto: AF_XDP when the probe passes). Options: --af-xdp, --af-packet (same as DEMO_PORT).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${RINGWAY_BUILD_DIR:-build-demo}
secs=${DEMO_SECONDS:-15}
nodes=${DEMO_NODES:-4}
prefix=${DEMO_PREFIX:-demo}
conc=${DEMO_CONCURRENCY:-8}
py=/usr/bin/python3
sandbox=(bash "$top/scripts/sandbox.sh")
port=${DEMO_PORT:-auto}
for arg in "$@"; do
	case $arg in
	--af-xdp) port=af_xdp ;;
	--af-packet) port=af_packet ;;
	*) echo "demo: unknown option $arg (--af-xdp, --af-packet)" >&2; exit 2 ;;
	esac
done
case $port in
auto | af_xdp | af_packet) ;;
*) echo "demo: DEMO_PORT must be auto, af_xdp or af_packet, not $port" >&2; exit 2 ;;
esac

step() { printf '\n==== %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (namespaces, hugepages)" >&2; exit 1; }

step "dependencies (Debian packages)"
bash scripts/setup-deps.sh

step "build ($build)"
if [ -f "$build/build.ninja" ]; then
	meson setup --reconfigure "$build" -Ddpdk=enabled -Dtests=disabled -Dbench=false \
		>"$build.setup.log" 2>&1
else
	meson setup "$build" -Ddpdk=enabled -Dtests=disabled -Dbench=false >"$build.setup.log" 2>&1
fi || { cat "$build.setup.log" >&2; exit 1; }
ninja -C "$build" -j2 app/ringway/ringway app/ringway-plan/ringway-plan app/ringwayctl/ringwayctl \
	app/ringway-loadgen/ringway-loadgen
ringway=$build/app/ringway/ringway
[ -x "$ringway" ] || { echo "demo: $ringway was not built" >&2; exit 1; }

step "sandbox up ($nodes memcached nodes, and one spare for the live add)"
trap '"${sandbox[@]}" down --prefix "$prefix" >/dev/null 2>&1 || true' EXIT
"${sandbox[@]}" up --nodes $((nodes + 1)) --prefix "$prefix"
"${sandbox[@]}" status --prefix "$prefix"
state=/run/ringway-sandbox/$prefix
# shellcheck disable=SC1091
. "$state/env"

cat >"$state/memcaslap.cnf" <<'EOF'
key
32 64 1
value
100 1000 1
cmd
0 0.1
1 0.9
EOF

# run_memcaslap SERVER: memcaslap -U with verification from the client namespace.
run_memcaslap() {
	# memcaslap stalls a connection ~30 s per lost datagram: bound the run anyway.
	timeout $((secs + 60)) ip netns exec "$NS_CLIENT" memcaslap -s "$1" -U \
		-F "$state/memcaslap.cnf" -t "${secs}s" -T 1 -c "$conc" -v 1.0 -w 4k || true
}

# node_stats: "cmd_get cmd_set curr_items" of every node, asked directly over TCP.
node_stats() {
	local i
	for i in $(seq 1 "$NODES"); do
		ip=NODE${i}_IP
		printf 'node%d %s ' "$i" "${!ip}"
		ip netns exec "$NS_CLIENT" bash -c "exec 3<>/dev/tcp/${!ip}/11211;
			printf 'stats\r\nquit\r\n' >&3; cat <&3" |
			tr -d '\r' | awk '$2=="cmd_get"{g=$3} $2=="cmd_set"{s=$3} $2=="curr_items"{c=$3}
				END{print g, s, c}'
	done
}

step "baseline: memcaslap -U straight at node1 ($NODE1_IP), ${secs}s"
direct=$(run_memcaslap "$NODE1_IP:11211")
echo "$direct" | tail -14

# xdp_unusable: why AF_XDP mode cannot run here (empty when it can): ringway built with its
# steering program, AF_XDP sockets in the kernel, and an XDP program accepted on the router's
# veth (our own object, unconfigured: it passes everything; detached right away).
xdp_unusable() {
	local obj=$build/lib/steer/steer.bpf.o
	[ -f "$obj" ] || { echo "ringway was built without AF_XDP mode (lib/steer)"; return; }
	ip netns exec "$NS_ROUTER" "$py" -c 'import socket; socket.socket(44, socket.SOCK_RAW)' \
		2>/dev/null || { echo "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)"; return; }
	if ! ip -n "$NS_ROUTER" link set dev "$ROUTER_IF" xdp obj "$obj" sec xdp 2>/dev/null; then
		echo "this kernel refused an XDP program on $ROUTER_IF"
		return
	fi
	ip -n "$NS_ROUTER" link set dev "$ROUTER_IF" xdp off
}
if [ "$port" != af_packet ]; then
	why=$(xdp_unusable)
	if [ -z "$why" ]; then
		port=af_xdp
	elif [ "$port" = af_xdp ]; then
		echo "demo: AF_XDP asked for, but $why" >&2
		exit 1
	else
		echo "demo: AF_XDP not available ($why): falling back to net_af_packet"
		port=af_packet
	fi
fi

step "start ringway on ${port/af_/net_af_}0 (iface $ROUTER_IF in $NS_ROUTER)"
conf=$state/ringway.conf
"${sandbox[@]}" config --prefix "$prefix" --members "$nodes" >"$conf"
printf '\n[warmup]\nwindow_s = 30\n' >>"$conf" # the live add below warms the moved keys
"${sandbox[@]}" router-start --prefix "$prefix" --ringway "$ringway" --config "$conf" \
	--port "$port"
if [ "$port" = af_xdp ]; then
	echo "AF_XDP: ringway's steering program on $ROUTER_IF; the kernel keeps ARP, ping, TCP:"
	ip -n "$NS_ROUTER" -d link show dev "$ROUTER_IF" | grep -o 'prog/xdp id [0-9]* name [a-z_]*' ||
		true
	ip netns exec "$NS_CLIENT" ping -c 2 -i 0.2 -W 1 "$ROUTER_IP" | tail -2 || true
fi
# Warm up: the router resolves every node by ARP; keys over all nodes round-trip.
"$py" - "$ROUTER_IP" "$NS_CLIENT" <<'EOF'
import sys, time
sys.path.insert(0, "tests/e2e/clients")
from mcudp import UdpClient, Timeout
c = UdpClient((sys.argv[1], 11211), ns=sys.argv[2], timeout=0.3)
ok = 0
end = time.monotonic() + 10
i = 0
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
before=$(node_stats)

step "memcaslap -U through ringway ($ROUTER_IP), ${secs}s"
routed=$(run_memcaslap "$ROUTER_IP:11211")
echo "$routed" | tail -14

step "per-node split"
after=$(node_stats)
"$py" tests/e2e/clients/telemetry.py --nodes-table "/var/run/dpdk/$FILE_PREFIX/dpdk_telemetry.v2" ||
	true
echo
echo "memcached's own counts during the routed run:"
paste <(echo "$before") <(echo "$after") | awk '{
	g = $8 - $3; s = $9 - $4; tg += g; ts += s
	line[NR] = sprintf("  %-6s %-12s gets %8d  sets %7d  items %7d", $1, $2, g, s, $10)
	sets[NR] = s
} END { for (i = 1; i <= NR; i++) printf "%s  (%.1f%% of sets)\n", line[i], 100 * sets[i] / (ts ? ts : 1) }'

step "router counters (/ringway/stats)"
"$py" tests/e2e/clients/telemetry.py --nonzero "/var/run/dpdk/$FILE_PREFIX/dpdk_telemetry.v2" \
	/ringway/stats || true
if [ "$port" = af_xdp ]; then
	step "XDP steering program counters (/ringway/steer: to_xsk_* went to ringway, pass_* to the kernel)"
	"$py" tests/e2e/clients/telemetry.py --nonzero \
		"/var/run/dpdk/$FILE_PREFIX/dpdk_telemetry.v2" /ringway/steer || true
fi

step "summary (ringway on ${port/af_/net_af_})"
tps() { echo "$1" | sed -n 's/.*TPS: \([0-9]*\).*/\1/p' | tail -1; }
field() { echo "$1" | sed -n "s/^$2: \([0-9]*\)/\1/p" | tail -1; }
d=$(tps "$direct")
r=$(tps "$routed")
printf '%-28s %10s %10s\n' "" "direct" "ringway"
printf '%-28s %10s %10s\n' "memcaslap -U TPS" "$d" "$r"
for f in verify_failed udp_timeout packet_drop get_misses; do
	printf '%-28s %10s %10s\n' "$f" "$(field "$direct" $f)" "$(field "$routed" $f)"
done
[ -n "$d" ] && [ -n "$r" ] && awk -v d="$d" -v r="$r" 'BEGIN{printf "ringway / direct: %.2f (2 vCPUs shared by client, router and nodes)\n", r / d}'

# live_add: the live add of the spare node with warm-up on ([warmup] window_s in the config):
# ringway-loadgen preloads 5,000 keys through the router and runs GETs/SETs (90/10) at 2,000/s
# with the hit ratio per 100 ms (--series-ms) while tests/e2e/control_moved.py applies
# `ringwayctl add` under memcaslap load and measures the moved fraction at the nodes; then the
# hit ratio before and after the add and its lowest 100-ms bucket, and what the warm-up sent
# to previous owners. Sets live=1 on a failure.
live_add() {
	local spare=node$((nodes + 1)) lg=$state/lg-add lg_pid line i
	local tel=/var/run/dpdk/$FILE_PREFIX/dpdk_telemetry.v2
	"$py" tests/e2e/clients/telemetry.py --nonzero "$tel" /ringway/stats >"$lg.stats0" || true
	ip netns exec "$NS_CLIENT" "$build/app/ringway-loadgen/ringway-loadgen" --no-huge -m 256 \
		--no-pci --no-shconf --file-prefix "$prefix-lg" \
		--vdev "net_af_packet0,iface=$CLIENT_IF,framecnt=4096" -- --src 198.18.0.20 \
		--dst "$ROUTER_IP:11211" --arp --idle-us 20 --keys 5000 --key-prefix add: \
		--get-ratio 0.9 --value-size 100 --dist uniform --preload --rate 2000 --duration 60 \
		--series-ms 100 --json "$lg.json" >/dev/null 2>"$lg.log" &
	lg_pid=$!
	for i in $(seq 1 60); do
		grep -q '^loadgen run' "$lg.log" && break
		kill -0 "$lg_pid" 2>/dev/null || break
		sleep 0.5
	done
	if ! grep -q '^loadgen run' "$lg.log"; then
		echo "demo: ringway-loadgen did not start its run:" >&2
		tail -3 "$lg.log" >&2
		kill -INT "$lg_pid" 2>/dev/null || true
		wait "$lg_pid" 2>/dev/null || true
		rm -rf "/var/run/dpdk/$prefix-lg"
		live=1
		return
	fi
	echo "ringway-loadgen: 5,000 keys preloaded through the router, 2,000 req/s (90% GETs)"
	"$py" tests/e2e/control_moved.py --prefix "$prefix" \
		--ctl "$build/app/ringwayctl/ringwayctl" --add "$spare" |
		while IFS= read -r line; do
			# printed right after the add returned: the add's time
			[[ $line != '$ ringwayctl add '* ]] || date +%s.%N >"$lg.add"
			printf '%s\n' "$line"
		done || live=1
	sleep 2 # the load goes on after the add's measurement; then its report
	kill -INT "$lg_pid" 2>/dev/null || true
	wait "$lg_pid" || live=1
	rm -rf "/var/run/dpdk/$prefix-lg"
	"$py" tests/e2e/clients/telemetry.py --nonzero "$tel" /ringway/stats >"$lg.stats1" || true
	[ -f "$lg.add" ] || { echo "demo: no add seen" >&2; live=1; return; }
	"$py" - "$lg.json" "$(cat "$lg.add")" "$lg.stats0" "$lg.stats1" <<'EOF' || live=1
import json, sys
run = json.load(open(sys.argv[1]))["run"]
ser, t_add = run["series"], float(sys.argv[2])
iv = ser["interval_ms"] / 1000.0
at = int((t_add - ser["start_unix"]) / iv)
hits, misses = ser["hits"], ser["misses"]
n = len(hits)
full = [i for i in range(n - 1) if hits[i] + misses[i] > 0]  # the last bucket is partial
def ratio(ix):
    g = sum(hits[i] + misses[i] for i in ix)
    return sum(hits[i] for i in ix) / g if g else float("nan")
low, low_at = min((hits[i] / (hits[i] + misses[i]), i) for i in full if i >= at)
def ctr(p):
    return {l.split()[0]: int(l.split()[1]) for l in open(p) if len(l.split()) == 2}
s0, s1 = ctr(sys.argv[3]), ctr(sys.argv[4])
d = {k: s1.get(k, 0) - s0.get(k, 0) for k in ("warm_requests", "warm_hits", "warm_fills",
                                             "warm_deletes")}
print("hit ratio through the add (warm-up on, ringway-loadgen, 100-ms buckets):")
print("  before the add %.4f (%.1f s), after it %.4f (%.1f s); lowest 100-ms bucket after the "
      "add %.4f at +%.1f s" % (ratio([i for i in full if 1 <= i < at]), at * iv,
                               ratio([i for i in full if i >= at]), (n - at) * iv, low,
                               (low_at - at) * iv))
print("  warm-up: %d reads of moved keys sent to their previous owners (%d hits), %d adds to "
      "the new owner, %d deletes at previous owners" % (d["warm_requests"], d["warm_hits"],
                                                       d["warm_fills"], d["warm_deletes"]))
print("  lost %d of %d requests" % (run["lost"], run["sent"]))
EOF
}

step "live add of node$((nodes + 1)) with warm-up on, under load: plan, add, moved fraction, hit ratio"
live=0
live_add

step "node2 frozen (SIGSTOP) for a few seconds under memcaslap load: detection, stand-ins, clean return"
ctl=("$build/app/ringwayctl/ringwayctl" --socket "$state/control.sock")
health() { "${ctl[@]}" list | sed -n "s/^name $1 .* health \([a-z,]*\) .*/\1/p"; }
counter() { "${ctl[@]}" stats | awk -v k="$1" '$1 == k {print $2}'; }
hits() {
	local i ip
	for i in $(seq 1 $((nodes + 1))); do
		ip=NODE${i}_IP
		# A frozen node accepts the connection and never answers: bounded, shown as -1.
		timeout 1 ip netns exec "$NS_CLIENT" bash -c "exec 3<>/dev/tcp/${!ip}/11211;
			printf 'stats\r\nquit\r\n' >&3; cat <&3" | tr -d '\r' |
			awk -v n="node$i" '$2=="get_hits"{h=$3} END{printf "%s %s ", n, h == "" ? -1 : h}'
	done
	echo
}
epoch0=$("${ctl[@]}" epoch)
# Load at the freeze: memcaslap through the router. A request lost in the freeze stalls that
# memcaslap connection for ~30 s, so this run is cut at 15 s; a second run starts once the
# node is down and shows the stand-ins serving its keys.
timeout 15 ip netns exec "$NS_CLIENT" memcaslap -s "$ROUTER_IP:11211" -U -F "$state/memcaslap.cnf" \
	-t 12s -T 1 -c "$conc" -v 1.0 -w 4k >"$state/memcaslap.freeze" 2>&1 &
mc_pid=$!
sleep 2
pid2=$(cat "$state/node2.pid")
t0=$(date +%s%N)
kill -STOP "$pid2"
while [ "$(health node2)" = up ] || [ "$(health node2)" = suspect ]; do
	[ $(($(date +%s%N) - t0)) -lt 5000000000 ] || break
	sleep 0.02
done
t1=$(date +%s%N)
echo "node2 frozen; the router marked it $(health node2) after $(((t1 - t0) / 1000000)) ms:"
grep -E 'node node2 .*-> (suspect|down)' "$state/router.log" | tail -2 | sed 's/^/  log: /'
fo0=$(counter failover_next)
hits0=$(hits)
echo "memcaslap -U through ringway for 3 s while node2 is frozen:"
timeout 12 ip netns exec "$NS_CLIENT" memcaslap -s "$ROUTER_IP:11211" -U \
	-F "$state/memcaslap.cnf" -t 3s -T 1 -c "$conc" -v 1.0 -w 4k 2>&1 |
	grep -E '^(verify_failed|udp_timeout|get_misses):|TPS' | sed 's/^/  /' || true
hits1=$(hits)
echo "requests of node2's keys sent to stand-ins (failover_next): $(($(counter failover_next) - fo0))"
echo "get_hits per node during those 3 s (node2 frozen: -1; the others serve its keys too):"
paste <(echo "$hits0" | xargs -n2) <(echo "$hits1" | xargs -n2) |
	awk '{printf "  %-6s %9d -> %9d%s\n", $1, $2, $4, $4 < 0 ? "" : sprintf("  (+%d)", $4 - $2)}'
kill -CONT "$pid2"
t2=$(date +%s%N)
while [ "$(health node2)" != up ]; do
	[ $(($(date +%s%N) - t2)) -lt 10000000000 ] || break
	sleep 0.02
done
echo "node2 let go (SIGCONT) after $(((t2 - t0) / 1000000)) ms frozen: health $(health node2)" \
	"$((($(date +%s%N) - t2) / 1000000)) ms later"
grep -E 'node node2 .*-> up' "$state/router.log" | tail -1 | sed 's/^/  log: /'
echo "epoch before: ${epoch0#OK }, after: $("${ctl[@]}" epoch | sed 's/^OK //')"
wait "$mc_pid" || true
freeze=0
[ "$(health node2)" = up ] || freeze=1

step "stop ringway (its exit print; counters that stayed 0 left out)"
"${sandbox[@]}" router-stop --prefix "$prefix" | grep -v -E '^EAL|^TELEMETRY| 0$' || true

step "what adding a fifth node would move (ringway-plan compare, 20,000 keys)"
head -n "$nodes" "$state/nodes" >"$state/nodes.members"
"$build/app/ringway-plan/ringway-plan" compare --nodes "$state/nodes.members" \
	--add "node$((nodes + 1))=198.18.1.$((nodes + 1)):11211" --generate 20000 || true

fail=0
[ "$(field "$routed" verify_failed)" = 0 ] || fail=1
[ "$(field "$routed" udp_timeout)" = 0 ] || fail=1
ops=$(echo "$routed" | sed -n 's/.*Ops: \([0-9]*\).*/\1/p' | tail -1)
[ "${ops:-0}" -gt 1000 ] || fail=1
[ $live = 0 ] || fail=1
[ $freeze = 0 ] || fail=1
step "tear down"
"${sandbox[@]}" down --prefix "$prefix"
trap - EXIT
if [ $fail = 0 ]; then
	echo "demo: OK (zero verify failures and zero UDP timeouts through ringway)"
else
	echo "demo: FAILED: memcaslap through ringway did little work or saw verify failures or" \
		"UDP timeouts (see the router's drop counters above)" >&2
fi
exit $fail
