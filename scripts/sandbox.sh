#!/usr/bin/env bash
# The ringway namespace sandbox: a client, a router and K memcached nodes on one L2 segment,
# each in its own network namespace, joined by veth pairs to a Linux bridge in a "fabric"
# namespace. Nothing is created in, or routed through, the host's own namespace: every veth
# is created inside the fabric namespace with its peer placed straight into its namespace.
#
#   scripts/sandbox.sh up     [--nodes K] [--routers R] [--prefix NAME] [--no-huge] [--hugepages N]
#       (--routers R, default 1: routers 2..R in namespaces <prefix>-router2.. at 198.18.0.2..,
#        each with its own DPDK file prefix rw-<prefix>-rI, control socket and state file;
#        router-start, router-stop and config take --router I for them)
#       --routed: nodes behind a gateway instead of on the router's segment (see below)
#       --vlan N: the segment is VLAN N (1..4094): the client's and the nodes' frames are
#       tagged N on the wire (tc BPF on their veth0, scripts/sandbox-vlan.bpf.c: untag on
#       ingress, tag on egress, as a switch's access port; the kernel needs no 802.1Q), the
#       router's veth0 carries the tags (in the frames: tx VLAN offload off on its peer), and
#       `config` writes `vlan = N` in [router]. In af_xdp mode the router namespace's kernel
#       holds the router address on VLAN N: on veth0.N when the kernel has 802.1Q, else on
#       veth0 with the same tagging program on it. Not with --routed.
#       --two-ports: the router gets a second veth (veth1, DPDK port 1) on a bridge of its own
#       (br1) with the nodes, 198.18.1.0/24, the router there 198.18.1.254 (node_address);
#       the client's segment 198.18.0.0/24 keeps veth0 (port 0). The client cannot reach the
#       nodes directly (checks run inside the node namespaces); in af_xdp mode port 1 is
#       net_af_xdp1 on veth1 and the kernel holds node_address (node_address6) there.
#       Not with --routed or --vlan.
#       --ipv6: IPv6 too, in every topology (addresses below, all `nodad`): IPv6 is enabled
#       only in the namespaces that get an address (sysctl inside each), RA, autoconf and
#       router solicitations off; memcached listens on both families. Without --ipv6 IPv6
#       stays off everywhere, so no IPv6 chatter (MLD, ND) moves an IPv4 test's counters.
#   scripts/sandbox.sh down   [--prefix NAME]
#   scripts/sandbox.sh status [--prefix NAME]
#   scripts/sandbox.sh exec   [--prefix NAME] ROLE CMD...      ROLE: client router fabric nodeI
#   scripts/sandbox.sh router-start [--prefix NAME] --ringway BIN --config FILE [--lcores L]
#                                   [--port af_packet|af_xdp] [-- EXTRA-EAL-ARGS...]
#       (ringway in the router namespace on its veth, in the background. --port (default: env
#        SANDBOX_PORT, else af_packet): af_packet = net_af_packet0, the router namespace's
#        kernel has no address (env SANDBOX_AF_PACKET_ARGS: extra PMD arguments, default
#        framecnt=4096); af_xdp = net_af_xdp0 with ringway's XDP steering program, the
#        router address is put on the veth for the kernel, which answers ARP, ping and TCP
#        (env SANDBOX_AF_XDP_ARGS: extra PMD arguments, default none). The port is recorded
#        as PORT= in router.env.)
#   scripts/sandbox.sh router-stop  [--prefix NAME]
#   scripts/sandbox.sh config [--prefix NAME] [--algo A] [--vnodes N] [--request-ms MS]
#                             [--static-macs] [--members M]
#                             [--ipv6|--ipv6-nodes|--ipv6-clients|--ipv6-only]
#                             > FILE
#       (--members M: only node1..M in the config; the others are spares to `ringwayctl add`.
#        With an `up --ipv6` sandbox: --ipv6 = everything IPv6: `address6`, nodes
#        `[v6]:port`, IPv6 client prefixes only, IPv6 routes; the mixed fleets: --ipv6-nodes =
#        IPv6 nodes, --ipv6-clients = IPv4 nodes, both with `address6` and the client
#        prefixes of both families, so IPv4 and IPv6 clients reach the nodes' family;
#        --ipv6-only = --ipv6 with no IPv4 address at all: no `address` (nor node_address),
#        IPv6 routes only: an IPv6-only router.)
#
# Addresses (all inside 198.18.0.0/15, one /15 subnet):
#   router 198.18.0.1 (af_packet: owned by DPDK, the router namespace's kernel has NO address
#   on its veth, so only ringway answers ARP and ICMP for it; af_xdp: the kernel holds it too
#   and answers ARP and ICMP, ringway gets only its memcached UDP), client 198.18.0.10 (and 198.18.0.200, an
#   address outside the allowed client prefix 198.18.0.0/25), node i 198.18.1.i.
# Routed (`up --routed`): three subnets joined by a gateway namespace <prefix>-gw, the only
# namespace with IP forwarding on:
#   segment 198.18.0.0/24 (bridge br0): router 198.18.0.1, client 198.18.0.10 (+ .200),
#       gateway 198.18.0.254
#   nodes   198.18.2.0/24 (bridge br1): node i 198.18.2.i, gateway 198.18.2.254
#   remote clients 198.18.3.0/24 (bridge br2): rclient 198.18.3.10, gateway 198.18.3.254
# The nodes and the remote client route through the gateway; `config` then writes a [route]
# section (198.18.0.0/24 direct, 198.18.2.0/24 via 198.18.0.254) and allows 198.18.3.0/24.
# Each memcached node: `memcached -U 11211 -p 11211 -l 198.18.1.i -u root` (UDP for the
# router, TCP for direct checks); with --ipv6 `-l 198.18.1.i,[2001:2::1:i]`.
#
# IPv6 (`up --ipv6`; the benchmarking range 2001:2::/48, every prefix a /64, every address
# `nodad`; node numbers in hex):
#   flat: router 2001:2::1 (af_packet: the router namespace's kernel keeps IPv6 disabled on
#   its veth, so it holds no address and sends nothing: ringway alone answers ND and ping6;
#   af_xdp: the kernel holds it and owns ND, as with ARP), client 2001:2::100 (allowed
#   prefix 2001:2::100/121), outsider 2001:2::200, node i 2001:2::1:i.
#   routed: gateway 2001:2::fe on the segment, nodes 2001:2:2::i behind it (gateway
#   2001:2:2::fe), remote client 2001:2:3::100 (gateway 2001:2:3::fe); IPv6 forwarding on in
#   the gateway only; the client and nodes hold kernel routes through it.
#   two ports: nodes 2001:2:1::i on br1, the router there 2001:2:1::fe (node_address6).
#   --routers R: router I at 2001:2::I.
#
# State lives in /run/ringway-sandbox/<prefix>/: env (KEY=value lines, sourceable by sh and
# easy to parse), nodes (the `name address:port weight` file ringway-plan reads; nodes6 the
# same with the nodes' IPv6 addresses, `name [v6]:port weight`, with --ipv6), pid files,
# logs and the hugepage reservation this sandbox made (given back on `down`).
# `up` over a leftover sandbox of the same prefix removes the leftover first; a failed `up`
# removes what it had made (trap EXIT).
set -euo pipefail

prog=$(basename "$0")
run_root=/run/ringway-sandbox
prefix=rw
nodes=4
routers=1
router_sel=1
huge_pages=256
force_nohuge=0
subnet_len=15
router_ip=198.18.0.1
client_ip=198.18.0.10
client_outside_ip=198.18.0.200
client_prefix=198.18.0.0/25
mc_port=11211
routed=0
vlan=0
two_ports=0
node_side_ip=198.18.1.254
gw_seg_ip=198.18.0.254
gw_node_ip=198.18.2.254
gw_rclient_ip=198.18.3.254
rclient_ip=198.18.3.10
ipv6=0
router_ip6=2001:2::1
client_ip6=2001:2::100
outsider_ip6=2001:2::200
client_prefix6=2001:2::100/121
gw_seg_ip6=2001:2::fe
gw_node_ip6=2001:2:2::fe
gw_rclient_ip6=2001:2:3::fe
rclient_ip6=2001:2:3::100
node_side_ip6=2001:2:1::fe

die() {
	echo "$prog: $*" >&2
	exit 1
}
note() { echo "sandbox[$prefix]: $*" >&2; }

node_ip() { if [ "$routed" = 1 ]; then echo "198.18.2.$1"; else echo "198.18.1.$1"; fi; }
# node_ip6 I: node I's IPv6 address (I in hex): on the segment, behind the gateway, or on the
# node port's segment (two ports).
node_ip6() {
	if [ "$routed" = 1 ]; then
		printf '2001:2:2::%x\n' "$1"
	elif [ "$two_ports" = 1 ]; then
		printf '2001:2:1::%x\n' "$1"
	else
		printf '2001:2::1:%x\n' "$1"
	fi
}
# rsuf I: the suffix of router I's names ("" for router 1, which keeps the old ones).
rsuf() { [ "$1" = 1 ] && echo "" || echo "$1"; }
ns_name() { echo "$prefix-$1"; }

# nsx ROLE CMD...: run CMD inside the namespace of ROLE.
nsx() {
	local role=$1
	shift
	ip netns exec "$(ns_name "$role")" "$@"
}

state_dir() { echo "$run_root/$prefix"; }

# ---------------------------------------------------------------- up

# make_ns ROLE: a namespace with loopback up and IPv6 off by default (quiet links).
make_ns() {
	local ns
	ns=$(ns_name "$1")
	ip netns add "$ns"
	echo "$ns" >>"$(state_dir)/namespaces"
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
}

# ipv6_on ROLE [IF]: with --ipv6, IPv6 on in ROLE's namespace (all interfaces, or only IF),
# quiet: no DAD, no autoconf, no router advertisements accepted, no router solicitations.
ipv6_on() {
	local ns k conf
	[ "$ipv6" = 1 ] || return 0
	ns=$(ns_name "$1")
	for conf in ${2:-all default}; do
		for k in accept_dad=0 accept_ra=0 autoconf=0 router_solicitations=0 \
			disable_ipv6=0; do
			ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$conf.$k"
		done
	done
}

# addr6 ROLE IF ADDR/LEN [OPTIONS...]: an IPv6 address without duplicate address detection.
addr6() {
	local role=$1 ifn=$2 addr=$3
	shift 3
	ip -n "$(ns_name "$role")" -6 addr add "$addr" dev "$ifn" nodad "$@"
}

# no_offload NS IF: af_packet hands the router frames exactly as the sender's kernel left
# them; with tx checksum offload a veth leaves UDP checksums partial, so compute them fully.
no_offload() {
	ip netns exec "$1" ethtool -K "$2" tx off rx off sg off tso off gso off gro off \
		>/dev/null 2>&1 || ip netns exec "$1" ethtool -K "$2" tx off >/dev/null
}

# attach ROLE PORT [IF [BRIDGE]]: a veth pair, PORT on the fabric bridge (br0), IF (veth0)
# inside ROLE's namespace.
attach() {
	local role=$1 port=$2 ifn=${3:-veth0} br=${4:-br0} fab ns
	fab=$(ns_name fabric)
	ns=$(ns_name "$role")
	ip -n "$fab" link add "$port" type veth peer name "$ifn" netns "$ns"
	ip -n "$fab" link set "$port" master "$br"
	no_offload "$fab" "$port"
	no_offload "$ns" "$ifn"
	ip -n "$fab" link set "$port" up
	ip -n "$ns" link set "$ifn" up
}

# vlan_access ROLE: with --vlan N, ROLE's veth0 behaves as a switch's access port on VLAN N
# (frames tagged N on the wire); the tagging program is built once per sandbox.
vlan_access() {
	local ns obj
	[ "$vlan" != 0 ] || return 0
	ns=$(ns_name "$1")
	obj=$(state_dir)/vlan.bpf.o
	if [ ! -f "$obj" ]; then
		clang -O2 -g -target bpf -DVID="$vlan" -I/usr/include/"$(uname -m)"-linux-gnu \
			-c "$(dirname "$0")/sandbox-vlan.bpf.c" -o "$obj" ||
			die "--vlan: cannot build scripts/sandbox-vlan.bpf.c (clang, libbpf-dev)"
	fi
	ip netns exec "$ns" tc qdisc add dev veth0 clsact
	ip netns exec "$ns" tc filter add dev veth0 ingress bpf da obj "$obj" sec tc/ingress
	ip netns exec "$ns" tc filter add dev veth0 egress bpf da obj "$obj" sec tc/egress
}

# bridge NAME: a bridge in the fabric namespace, forwarding at once. With --ipv6 it does no
# MLD snooping: the af_packet router's kernel never joins its solicited-node group (it has
# IPv6 off), and a snooping bridge could hold back the Neighbor Solicitations for it.
bridge() {
	local fab
	fab=$(ns_name fabric)
	ip -n "$fab" link add "$1" type bridge forward_delay 0 stp_state 0
	[ "$ipv6" = 0 ] || ip -n "$fab" link set "$1" type bridge mcast_snooping 0
	ip -n "$fab" link set "$1" up
}

# routed_up: the node and remote-client bridges, the gateway between them and the segment
# (forwarding on there only), the remote client. Before the nodes are attached.
routed_up() {
	local gw br
	for br in br1 br2; do
		bridge "$br"
	done
	make_ns gw
	ipv6_on gw
	gw=$(ns_name gw)
	attach gw g0 seg br0
	attach gw g1 nodes br1
	attach gw g2 rclients br2
	ip -n "$gw" addr add "$gw_seg_ip/24" dev seg
	ip -n "$gw" addr add "$gw_node_ip/24" dev nodes
	ip -n "$gw" addr add "$gw_rclient_ip/24" dev rclients
	ip netns exec "$gw" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0
	make_ns rclient
	ipv6_on rclient
	attach rclient rc0 veth0 br2
	ip -n "$(ns_name rclient)" addr add "$rclient_ip/24" dev veth0
	ip -n "$(ns_name rclient)" route add default via "$gw_rclient_ip"
	# The segment's client reaches the nodes (direct checks) through the gateway too.
	ip -n "$(ns_name client)" route add 198.18.2.0/24 via "$gw_seg_ip"
	ip -n "$(ns_name client)" route add 198.18.3.0/24 via "$gw_seg_ip"
	if [ "$ipv6" = 1 ]; then
		addr6 gw seg "$gw_seg_ip6/64"
		addr6 gw nodes "$gw_node_ip6/64"
		addr6 gw rclients "$gw_rclient_ip6/64"
		ip netns exec "$gw" sysctl -qw net.ipv6.conf.all.forwarding=1
		addr6 rclient veth0 "$rclient_ip6/64"
		ip -n "$(ns_name rclient)" -6 route add default via "$gw_rclient_ip6"
		ip -n "$(ns_name client)" -6 route add 2001:2:2::/64 via "$gw_seg_ip6"
		ip -n "$(ns_name client)" -6 route add 2001:2:3::/64 via "$gw_seg_ip6"
		{
			echo "GW_IP6=$gw_seg_ip6"
			echo "RCLIENT_IP6=$rclient_ip6"
			echo "RCLIENT_PREFIX6=2001:2:3::/64"
			echo "NODE_PREFIX6=2001:2:2::/64"
		} >>"$(state_dir)/env"
	fi
	{
		echo "ROUTED=1"
		echo "GW_IP=$gw_seg_ip"
		echo "GW_MAC=$(ip netns exec "$gw" cat /sys/class/net/seg/address)"
		echo "NS_GW=$gw"
		echo "NS_RCLIENT=$(ns_name rclient)"
		echo "RCLIENT_IP=$rclient_ip"
		echo "RCLIENT_PREFIX=198.18.3.0/24"
		echo "NODE_PREFIX=198.18.2.0/24"
	} >>"$(state_dir)/env"
}

reserve_hugepages() {
	local f=/proc/sys/vm/nr_hugepages before after
	echo 0 >"$(state_dir)/hugepages"
	if [ "$force_nohuge" = 1 ] || [ "$huge_pages" -le 0 ] || [ ! -w $f ]; then
		echo "EAL_MEM='--no-huge -m 512'" >>"$(state_dir)/env"
		return
	fi
	before=$(cat $f)
	echo $((before + huge_pages)) >$f 2>/dev/null || true
	after=$(cat $f)
	if [ "$after" -ge $((before + huge_pages)) ]; then
		echo $((after - before)) >"$(state_dir)/hugepages"
		echo "EAL_MEM='--in-memory -m $((huge_pages * 2))'" >>"$(state_dir)/env"
		note "reserved $((after - before)) hugepages of 2 MiB"
	else
		# Partial reservations are given back: the router then runs on --no-huge.
		[ "$after" -gt "$before" ] && echo "$before" >$f
		echo "EAL_MEM='--no-huge -m 512'" >>"$(state_dir)/env"
		note "hugepages not available, the router will run with --no-huge"
	fi
}

# start_node I: memcached on the node's IPv4 address (and IPv6 one with --ipv6), UDP and TCP.
start_node() {
	local i=$1 ip sd
	ip=$(node_ip "$i")
	[ "$ipv6" = 0 ] || ip="$ip,[$(node_ip6 "$i")]"
	sd=$(state_dir)
	nsx "node$i" memcached -d -U $mc_port -p $mc_port -l "$ip" -u root -t 1 -m 256 -c 1024 \
		-P "$sd/node$i.pid"
}

# wait_node I: memcached answers `version` over TCP at its address (from the client, or
# with --two-ports from the node's own namespace: the client cannot reach it).
wait_node() {
	local i=$1 ip tries=0 from=client
	[ "$two_ports" = 0 ] || from="node$i"
	for ip in $(node_ip "$i") $([ "$ipv6" = 0 ] || node_ip6 "$i"); do
		until nsx "$from" bash -c "exec 3<>/dev/tcp/$ip/$mc_port &&
			printf 'version\r\n' >&3 && read -r -t 2 l <&3 && [[ \$l == VERSION* ]]" \
			2>/dev/null; do
			tries=$((tries + 1))
			[ $tries -lt 50 ] || die "node$i ($ip) does not answer over TCP"
			sleep 0.1
		done
	done
}

cmd_up() {
	[ "$(id -u)" -eq 0 ] || die "must run as root"
	[ "$nodes" -ge 1 ] && [ "$nodes" -le 200 ] || die "--nodes must be 1..200"
	[ "$routers" -ge 1 ] && [ "$routers" -le 9 ] || die "--routers must be 1..9"
	[ "$routed" = 0 ] || subnet_len=24
	[[ $vlan =~ ^[0-9]+$ ]] && [ "$vlan" -le 4094 ] || die "--vlan must be 1..4094"
	[ "$vlan" = 0 ] || [ "$routed" = 0 ] || die "--vlan and --routed do not combine (yet)"
	[ "$two_ports" = 0 ] || { [ "$vlan" = 0 ] && [ "$routed" = 0 ]; } ||
		die "--two-ports does not combine with --routed or --vlan (yet)"
	[ "$two_ports" = 0 ] || subnet_len=24
	if [ -d "$(state_dir)" ] || ip netns list | grep -q "^$prefix-"; then
		note "removing a leftover sandbox of the same prefix"
		cmd_down
	fi
	mkdir -p "$(state_dir)"
	# A failed `up` leaves nothing behind.
	trap 'rc=$?; if [ $rc -ne 0 ]; then note "up failed, tearing down"; cmd_down; fi' EXIT
	: >"$(state_dir)/namespaces"
	{
		echo "PREFIX=$prefix"
		echo "NODES=$nodes"
		echo "ROUTER_IP=$router_ip"
		echo "CLIENT_IP=$client_ip"
		echo "CLIENT_OUTSIDE_IP=$client_outside_ip"
		echo "CLIENT_PREFIX=$client_prefix"
		echo "MC_PORT=$mc_port"
		echo "NS_FABRIC=$(ns_name fabric)"
		echo "NS_CLIENT=$(ns_name client)"
		echo "NS_ROUTER=$(ns_name router)"
		echo "ROUTER_IF=veth0"
		echo "CLIENT_IF=veth0"
		echo "FILE_PREFIX=rw-$prefix"
		echo "STATE_DIR=$(state_dir)"
		echo "SUBNET_LEN=$subnet_len"
		echo "VLAN=$vlan"
		echo "IPV6=$ipv6"
		if [ "$ipv6" = 1 ]; then
			echo "ROUTER_IP6=$router_ip6"
			echo "CLIENT_IP6=$client_ip6"
			echo "OUTSIDER_IP6=$outsider_ip6"
			echo "CLIENT_PREFIX6=$client_prefix6"
		fi
	} >"$(state_dir)/env"

	make_ns fabric
	bridge br0
	# With br_netfilter loaded the bridge would validate (and trim or drop) IPv4 and IPv6
	# headers before forwarding; the hostile tests need the router to see frames as sent.
	ip netns exec "$(ns_name fabric)" sysctl -qw net.bridge.bridge-nf-call-iptables=0 \
		net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0 \
		2>/dev/null || true

	make_ns client
	ipv6_on client
	attach client c0
	ip -n "$(ns_name client)" addr add "$client_ip/$subnet_len" dev veth0
	ip -n "$(ns_name client)" addr add "$client_outside_ip/$subnet_len" dev veth0
	if [ "$ipv6" = 1 ]; then
		addr6 client veth0 "$client_ip6/64"
		# Deprecated (preferred_lft 0): never the source the kernel picks, so the client
		# speaks from 2001:2::100; a socket bound to it still sends from it.
		addr6 client veth0 "$outsider_ip6/64" preferred_lft 0
	fi
	vlan_access client
	echo "CLIENT_MAC=$(cat_mac client)" >>"$(state_dir)/env"

	# The router's veth carries no kernel address: DPDK's af_packet port owns 198.18.0.1.
	make_ns router
	attach router r0
	# The tags reach the router's veth0 inside the frames (not as skb metadata), so that an
	# XDP program there sees them as a NIC's would deliver them.
	[ "$vlan" = 0 ] || ip netns exec "$(ns_name fabric)" ethtool -K r0 txvlan off >/dev/null
	if [ "$two_ports" = 1 ]; then
		bridge br1
		attach router rn0 veth1 br1
		{
			echo "TWO_PORTS=1"
			echo "NODE_SIDE_IP=$node_side_ip"
			echo "NODE_SIDE_MAC=$(ip netns exec "$(ns_name router)" cat /sys/class/net/veth1/address)"
			[ "$ipv6" = 0 ] || echo "NODE_SIDE_IP6=$node_side_ip6"
		} >>"$(state_dir)/env"
	fi
	echo "ROUTER_MAC=$(cat_mac router)" >>"$(state_dir)/env"
	echo "ROUTERS=$routers" >>"$(state_dir)/env"
	local r
	for r in $(seq 2 "$routers"); do
		make_ns "router$r"
		attach "router$r" "r$r"
		{
			echo "ROUTER${r}_IP=198.18.0.$r"
			[ "$ipv6" = 0 ] || printf 'ROUTER%s_IP6=2001:2::%x\n' "$r" "$r"
			echo "NS_ROUTER$r=$(ns_name "router$r")"
			echo "ROUTER${r}_MAC=$(cat_mac "router$r")"
			echo "FILE_PREFIX$r=rw-$prefix-r$r"
		} >>"$(state_dir)/env"
	done

	[ "$routed" = 0 ] || routed_up
	: >"$(state_dir)/nodes"
	local i
	for i in $(seq 1 "$nodes"); do
		make_ns "node$i"
		ipv6_on "node$i"
		if [ "$routed" = 1 ]; then
			attach "node$i" "n$i" veth0 br1
			ip -n "$(ns_name "node$i")" addr add "$(node_ip "$i")/24" dev veth0
			ip -n "$(ns_name "node$i")" route add default via "$gw_node_ip"
			if [ "$ipv6" = 1 ]; then
				addr6 "node$i" veth0 "$(node_ip6 "$i")/64"
				ip -n "$(ns_name "node$i")" -6 route add default via "$gw_node_ip6"
			fi
		elif [ "$two_ports" = 1 ]; then
			attach "node$i" "n$i" veth0 br1
			ip -n "$(ns_name "node$i")" addr add "$(node_ip "$i")/24" dev veth0
		else
			attach "node$i" "n$i"
			ip -n "$(ns_name "node$i")" addr add "$(node_ip "$i")/$subnet_len" dev veth0
			vlan_access "node$i"
		fi
		# Flat and two ports: the node's segment is on-link (/64).
		[ "$ipv6" = 0 ] || [ "$routed" = 1 ] || addr6 "node$i" veth0 "$(node_ip6 "$i")/64"
		echo "NODE${i}_IP=$(node_ip "$i")" >>"$(state_dir)/env"
		[ "$ipv6" = 0 ] || echo "NODE${i}_IP6=$(node_ip6 "$i")" >>"$(state_dir)/env"
		echo "NODE${i}_MAC=$(cat_mac "node$i")" >>"$(state_dir)/env"
		echo "NODE${i}_NS=$(ns_name "node$i")" >>"$(state_dir)/env"
		echo "node$i $(node_ip "$i"):$mc_port 1" >>"$(state_dir)/nodes"
		[ "$ipv6" = 0 ] || echo "node$i [$(node_ip6 "$i")]:$mc_port 1" >>"$(state_dir)/nodes6"
		start_node "$i"
	done
	reserve_hugepages
	for i in $(seq 1 "$nodes"); do
		wait_node "$i"
	done
	trap - EXIT
	local where="on the segment" v6=""
	[ "$routed" = 0 ] || where="behind gateway $gw_seg_ip, remote client $rclient_ip"
	[ "$ipv6" = 0 ] || v6=" IPv6: client $client_ip6, router $router_ip6, nodes $(node_ip6 1)..;"
	note "up: client $client_ip, router $router_ip (DPDK on $(ns_name router)/veth0)," \
		"$nodes memcached nodes $(node_ip 1)..$nodes $where;$v6 state in $(state_dir)"
}

cat_mac() { ip netns exec "$(ns_name "$1")" cat /sys/class/net/veth0/address; }

# xdp_prog_of ROLE: "id N name NAME" of the XDP program on ROLE's veth0, empty when none.
xdp_prog_of() {
	ip -n "$(ns_name "$1")" -d link show dev veth0 2>/dev/null |
		sed -n 's/^ *prog\/xdp \(id [0-9]*\)\( name [^ ]*\)\?.*/\1\2/p' | head -1
}

# ---------------------------------------------------------------- down

# kill_ns_pids NS: every process running in a namespace this sandbox made (memcached, the
# router, clients) was started by this sandbox or its callers; end them by pid.
kill_ns_pids() {
	local ns=$1 pids t
	pids=$(ip netns pids "$ns" 2>/dev/null || true)
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null || true
	for t in $(seq 1 30); do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[ -n "$pids" ] || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}

cmd_down() {
	local sd ns n f cur
	sd=$(state_dir)
	# The routers first, so that they can print their counters and release their memory.
	if [ -f "$sd/router.pid" ]; then
		cmd_router_stop >/dev/null 2>&1 || true
	fi
	for f in "$sd"/router[0-9]*.pid; do
		[ -f "$f" ] || continue
		n=${f##*/router}
		router_sel=${n%.pid} cmd_router_stop >/dev/null 2>&1 || true
	done
	# A ringway killed with SIGKILL leaves its XDP program on the router's veth (the next
	# ringway start would replace it); deleting the namespace removes the veth and the
	# program with it, say so and detach it first so that nothing outlives `down`.
	if [ -n "$(xdp_prog_of router)" ]; then
		note "XDP program left on the router's veth0 ($(xdp_prog_of router)), detaching it"
		nsx router ip link set dev veth0 xdp off 2>/dev/null || true
	fi
	{
		[ -f "$sd/namespaces" ] && cat "$sd/namespaces"
		ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$prefix-(fabric|client|rclient|gw|router[0-9]*|node[0-9]+)\$" || true
	} | sort -u | while read -r ns; do
		[ -n "$ns" ] || continue
		kill_ns_pids "$ns"
		ip netns del "$ns" 2>/dev/null || true
	done
	f=/proc/sys/vm/nr_hugepages
	if [ -f "$sd/hugepages" ]; then
		n=$(cat "$sd/hugepages")
		if [ "$n" -gt 0 ] && [ -w $f ]; then
			cur=$(cat $f)
			echo $((cur > n ? cur - n : 0)) >$f || true
		fi
	fi
	rm -rf "$sd"
	rm -rf "/var/run/dpdk/rw-$prefix"
	for f in /var/run/dpdk/rw-"$prefix"-r[0-9]*; do
		[ -e "$f" ] && rm -rf "$f"
	done
	note "down"
}

# ---------------------------------------------------------------- status

cmd_status() {
	local sd i ip ok=0
	sd=$(state_dir)
	if [ ! -f "$sd/env" ]; then
		echo "sandbox $prefix: not up"
		return 1
	fi
	# shellcheck disable=SC1091
	. "$sd/env"
	routed=${ROUTED:-0}
	echo "sandbox $prefix: $NODES nodes$([ "$routed" = 0 ] || echo " behind $GW_IP"), state in $sd"
	echo "  namespaces: $(tr '\n' ' ' <"$sd/namespaces")"
	echo "  client $CLIENT_IP ($CLIENT_MAC), router $ROUTER_IP ($ROUTER_MAC) EAL memory: $EAL_MEM"
	for i in $(seq 1 "$NODES"); do
		ip=$(node_ip "$i")
		if nsx client bash -c "exec 3<>/dev/tcp/$ip/$mc_port && printf 'version\r\n' >&3 &&
			read -r -t 2 l <&3 && [[ \$l == VERSION* ]]" 2>/dev/null; then
			echo "  node$i $ip:$mc_port up (pid $(cat "$sd/node$i.pid" 2>/dev/null))"
		else
			echo "  node$i $ip:$mc_port DOWN"
			ok=1
		fi
	done
	if [ -f "$sd/router.pid" ] && kill -0 "$(cat "$sd/router.pid")" 2>/dev/null; then
		echo "  router: running (pid $(cat "$sd/router.pid"), log $sd/router.log)"
	else
		echo "  router: not running"
	fi
	if [ -n "$(xdp_prog_of router)" ]; then
		echo "  router veth0: XDP program $(xdp_prog_of router)"
	fi
	return $ok
}

# ---------------------------------------------------------------- router

# router_kernel_addr IF ADDR/LEN [ADDR6]: af_xdp mode: the router namespace's kernel holds the
# address on IF (and ADDR6/64 with --ipv6, IPv6 turned on quietly there).
router_kernel_addr() {
	local ifn=$1 k
	ip -n "$NS_ROUTER" addr replace "$2" dev "$ifn"
	[ "${IPV6:-0}" = 1 ] && [ -n "${3:-}" ] || return 0
	for k in accept_dad=0 accept_ra=0 autoconf=0 router_solicitations=0 disable_ipv6=0; do
		ip netns exec "$NS_ROUTER" sysctl -qw "net.ipv6.conf.$ifn.$k"
	done
	ip -n "$NS_ROUTER" -6 addr replace "$3/64" dev "$ifn" nodad
}

# router_vlan_if: af_xdp mode, the interface where the router namespace's kernel meets the
# segment: veth0, or with --vlan N the VLAN's interface: veth0.N when the kernel has 802.1Q,
# else veth0 itself with the sandbox's tagging program on it (tc: untag VLAN N on ingress,
# drop other tags, tag on egress), which makes veth0 the kernel's interface on VLAN N. XDP
# runs before tc, so ringway's program still sees the tags. Prints the interface.
router_vlan_if() {
	local obj
	if [ "${VLAN:-0}" = 0 ]; then
		echo "$ROUTER_IF"
		return
	fi
	if ip -n "$NS_ROUTER" link show "$ROUTER_IF.$VLAN" >/dev/null 2>&1 ||
		ip -n "$NS_ROUTER" link add link "$ROUTER_IF" name "$ROUTER_IF.$VLAN" type vlan \
			id "$VLAN" 2>/dev/null; then
		ip -n "$NS_ROUTER" link set "$ROUTER_IF.$VLAN" up
		echo "$ROUTER_IF.$VLAN"
		return
	fi
	obj=$sd/vlan.bpf.o
	[ -f "$obj" ] || die "af_xdp --vlan: no $obj (built by up --vlan)"
	if ! ip netns exec "$NS_ROUTER" tc filter show dev "$ROUTER_IF" ingress 2>/dev/null |
		grep -q bpf; then
		{
			ip netns exec "$NS_ROUTER" tc qdisc add dev "$ROUTER_IF" clsact
			ip netns exec "$NS_ROUTER" tc filter add dev "$ROUTER_IF" ingress bpf da \
				obj "$obj" sec tc/ingress
			ip netns exec "$NS_ROUTER" tc filter add dev "$ROUTER_IF" egress bpf da \
				obj "$obj" sec tc/egress
		} >&2
	fi
	echo "$ROUTER_IF"
}

# router_kernel_off: af_packet mode after an af_xdp run: the kernel's VLAN interface or
# tagging program and the node-side addresses go (DPDK alone owns those addresses again).
router_kernel_off() {
	if [ "${VLAN:-0}" != 0 ]; then
		ip -n "$NS_ROUTER" link del "$ROUTER_IF.$VLAN" 2>/dev/null || true
		ip netns exec "$NS_ROUTER" tc qdisc del dev "$ROUTER_IF" clsact 2>/dev/null || true
	fi
	if [ "${TWO_PORTS:-0}" = 1 ]; then
		ip -n "$NS_ROUTER" addr flush dev veth1 2>/dev/null || true
		ip netns exec "$NS_ROUTER" sysctl -qw net.ipv6.conf.veth1.disable_ipv6=1
	fi
}

cmd_router_start() {
	local sd bin="" conf="" lcores=0-1 extra=() sock t port=${SANDBOX_PORT:-af_packet} vdev
	# Deep af_packet rings: a 500 KB value comes back as ~370 datagrams in one burst.
	local pmd_args=${SANDBOX_AF_PACKET_ARGS:-framecnt=4096}
	local xdp_args=${SANDBOX_AF_XDP_ARGS:-}
	sd=$(state_dir)
	[ -f "$sd/env" ] || die "sandbox $prefix is not up"
	while [ $# -gt 0 ]; do
		case $1 in
		--ringway) bin=$2; shift 2 ;;
		--config) conf=$2; shift 2 ;;
		--lcores) lcores=$2; shift 2 ;;
		--port) port=$2; shift 2 ;;
		--router) router_sel=$2; shift 2 ;;
		--) shift; extra=("$@"); break ;;
		*) die "router-start: unknown argument $1" ;;
		esac
	done
	[ -x "$bin" ] || die "router-start: --ringway BIN (executable) needed"
	[ -f "$conf" ] || die "router-start: --config FILE needed"
	# shellcheck disable=SC1091
	. "$sd/env"
	subnet_len=${SUBNET_LEN:-$subnet_len}
	local rs
	rs=$(rsuf "$router_sel")
	if [ -n "$rs" ]; then
		[ "$router_sel" -le "${ROUTERS:-1}" ] 2>/dev/null || die "no router $router_sel (up --routers)"
		[ "$port" = af_packet ] || die "router-start: routers 2.. run on af_packet only"
		NS_ROUTER=NS_ROUTER$rs
		NS_ROUTER=${!NS_ROUTER}
		FILE_PREFIX=FILE_PREFIX$rs
		FILE_PREFIX=${!FILE_PREFIX}
	fi
	case $port in
	af_packet)
		# DPDK alone owns the router address (a leftover from an af_xdp run goes).
		ip -n "$NS_ROUTER" addr del "$ROUTER_IP/$subnet_len" dev "$ROUTER_IF" 2>/dev/null || true
		# And its IPv6 address: the kernel keeps IPv6 off on the veth (no address, no
		# link-local, no ND, RS, MLD or DAD of its own); ringway answers ND itself.
		ip netns exec "$NS_ROUTER" sysctl -qw "net.ipv6.conf.$ROUTER_IF.disable_ipv6=1"
		[ -z "$rs" ] && router_kernel_off
		vdev="net_af_packet0,iface=$ROUTER_IF${pmd_args:+,$pmd_args}"
		# Two ports: the node side is port 1 (veth1), same queue pairs.
		[ "${TWO_PORTS:-0}" = 0 ] ||
			extra=(--vdev "net_af_packet1,iface=veth1${pmd_args:+,$pmd_args}" "${extra[@]}")
		;;
	af_xdp)
		# The kernel shares the veth: it owns ARP, ICMP and TCP for the router address, and
		# with IPv6 ND, ICMPv6 and TCP for its IPv6 address. On a VLAN it holds them on
		# the VLAN's interface; with two ports the node-side addresses on veth1 (port 1).
		local kif
		kif=$(router_vlan_if)
		router_kernel_addr "$kif" "$ROUTER_IP/$subnet_len" "${ROUTER_IP6:-}"
		vdev="net_af_xdp0,iface=$ROUTER_IF${xdp_args:+,$xdp_args}"
		if [ "${TWO_PORTS:-0}" = 1 ]; then
			router_kernel_addr veth1 "$NODE_SIDE_IP/24" "${NODE_SIDE_IP6:-}"
			extra=(--vdev "net_af_xdp1,iface=veth1${xdp_args:+,$xdp_args}" "${extra[@]}")
		fi
		;;
	*) die "router-start: --port must be af_packet or af_xdp, not $port" ;;
	esac
	rm -rf "/var/run/dpdk/$FILE_PREFIX"
	# shellcheck disable=SC2086
	# -l CORES, or --lcores MAP when the map places lcores on CPUs (e.g. 0@0,1@1,2@1: two
	# workers sharing CPU 1 on a 2-vCPU machine).
	local lc=(-l "$lcores")
	[[ $lcores == *@* ]] && lc=(--lcores "$lcores")
	ip netns exec "$NS_ROUTER" "$bin" "${lc[@]}" --no-pci $EAL_MEM --file-prefix "$FILE_PREFIX" \
		--vdev "$vdev" "${extra[@]}" -- --config "$conf" \
		>"$sd/router$rs.log" 2>&1 &
	echo $! >"$sd/router$rs.pid"
	sock=/var/run/dpdk/$FILE_PREFIX/dpdk_telemetry.v2
	for t in $(seq 1 150); do
		if ! kill -0 "$(cat "$sd/router$rs.pid")" 2>/dev/null; then
			cat "$sd/router$rs.log" >&2
			rm -f "$sd/router$rs.pid"
			die "router exited during start-up (log above)"
		fi
		[ -S "$sock" ] && break
		sleep 0.1
	done
	[ -S "$sock" ] || note "router telemetry socket $sock did not appear"
	# AF_XDP: until ringway's program and socket are on the veth, the kernel (which holds the
	# router address) would refuse memcached datagrams with ICMP port unreachable; wait for
	# the port to be up ("serving" once the program is checked and the workers run).
	if [ "$port" = af_xdp ]; then
		for t in $(seq 1 150); do
			grep -q '^ringway: serving' "$sd/router.log" 2>/dev/null && break
			kill -0 "$(cat "$sd/router.pid")" 2>/dev/null || break
			sleep 0.1
		done
		grep -q '^ringway: serving' "$sd/router.log" 2>/dev/null ||
			note "router did not report serving within 15 s (log $sd/router.log)"
	fi
	printf 'ROUTER_TELEMETRY=%s\nPORT=%s\n' "$sock" "$port" >"$sd/router$rs.env"
	note "router$rs pid $(cat "$sd/router$rs.pid") on $port, log $sd/router$rs.log"
}

# router-stop: SIGINT, wait for the exit counters, print the log; exit status is the router's.
cmd_router_stop() {
	local sd pid t rc=0 rs
	sd=$(state_dir)
	while [ $# -gt 0 ]; do
		case $1 in
		--router) router_sel=$2; shift 2 ;;
		*) die "router-stop: unknown argument $1" ;;
		esac
	done
	rs=$(rsuf "$router_sel")
	[ -f "$sd/router$rs.pid" ] || { note "router$rs not running"; return 0; }
	pid=$(cat "$sd/router$rs.pid")
	kill -INT "$pid" 2>/dev/null || true
	for t in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		note "router did not stop on SIGINT within 10 s, killing it"
		kill -KILL "$pid" 2>/dev/null || true
		rc=1
	fi
	wait "$pid" 2>/dev/null || true
	rm -f "$sd/router$rs.pid"
	# The router's DPDK runtime folder (its FILE_PREFIX).
	rm -rf "/var/run/dpdk/rw-$prefix${rs:+-r$rs}"
	cat "$sd/router$rs.log"
	return $rc
}

# ---------------------------------------------------------------- config

# config: a ringway.conf for this sandbox, in the format of config/ringway.conf.
cmd_config() {
	local sd algo=ring vnodes=160 static=0 i mac request_ms=1000 members="" fam=""
	local nodes6=0 allowed routes=""
	sd=$(state_dir)
	[ -f "$sd/env" ] || die "sandbox $prefix is not up"
	while [ $# -gt 0 ]; do
		case $1 in
		--algo) algo=$2; shift 2 ;;
		--vnodes) vnodes=$2; shift 2 ;;
		--request-ms) request_ms=$2; shift 2 ;;
		--static-macs) static=1; shift ;;
		--members) members=$2; shift 2 ;;
		--router) router_sel=$2; shift 2 ;;
		--ipv6 | --ipv6-nodes | --ipv6-clients | --ipv6-only)
			[ -z "$fam" ] ||
				die "config: one of --ipv6, --ipv6-nodes, --ipv6-clients, --ipv6-only"
			fam=${1#--}
			shift
			;;
		*) die "config: unknown argument $1" ;;
		esac
	done
	# shellcheck disable=SC1091
	. "$sd/env"
	routed=${ROUTED:-0}
	vlan=${VLAN:-0}
	two_ports=${TWO_PORTS:-0}
	[ -z "$fam" ] || [ "${IPV6:-0}" = 1 ] || die "config --$fam: the sandbox is not up --ipv6"
	local rs
	rs=$(rsuf "$router_sel")
	if [ -n "$rs" ]; then
		ROUTER_IP=ROUTER${rs}_IP
		ROUTER_IP=${!ROUTER_IP:?no router $router_sel (up --routers)}
		if [ -n "$fam" ]; then
			ROUTER_IP6=ROUTER${rs}_IP6
			ROUTER_IP6=${!ROUTER_IP6}
		fi
	fi
	# The client prefixes: IPv4 (default), IPv6 (--ipv6) or both (mixed fleets); the nodes'
	# family: IPv6 with --ipv6 and --ipv6-nodes.
	allowed=$CLIENT_PREFIX${RCLIENT_PREFIX:+, $RCLIENT_PREFIX}
	local allowed6=${CLIENT_PREFIX6:-}${RCLIENT_PREFIX6:+, $RCLIENT_PREFIX6}
	case $fam in
	ipv6 | ipv6-only) allowed=$allowed6; nodes6=1 ;;
	ipv6-nodes) allowed="$allowed, $allowed6"; nodes6=1 ;;
	ipv6-clients) allowed="$allowed, $allowed6" ;;
	esac
	if [ "$routed" = 1 ]; then
		routes=$(printf 'static = 198.18.0.0/24 direct\nstatic = %s via %s' "$NODE_PREFIX" "$GW_IP")
		[ -z "$fam" ] || routes+=$(printf '\nstatic = 2001:2::/64 direct\nstatic = %s via %s' \
			"$NODE_PREFIX6" "$GW_IP6")
	fi
	if [ "$two_ports" = 1 ]; then
		routes='static = 198.18.1.0/24 direct'
		[ -z "$fam" ] || routes+=$'\nstatic = 2001:2:1::/64 direct'
	fi
	# IPv6-only: no IPv4 address anywhere in the router's config, IPv6 routes only.
	local v4=1
	if [ "$fam" = ipv6-only ]; then
		v4=0
		routes=$(printf '%s\n' "$routes" | grep -v '^static = 198\.' || true)
	fi
	cat <<EOF
# ringway configuration for sandbox $prefix (generated by scripts/sandbox.sh config;
# format: config/ringway.conf). The router's MAC is its af_packet port's (the veth's).
[router]
port = 0
$([ "$v4" = 0 ] || echo "address = $ROUTER_IP")
listen_ports = $mc_port
$([ "$vlan" = 0 ] || echo "vlan = $vlan")
$([ -z "$fam" ] || echo "address6 = $ROUTER_IP6")
$([ "${TWO_PORTS:-0}" = 0 ] || echo "node_port = 1")
$([ "${TWO_PORTS:-0}" = 0 ] || [ "$v4" = 0 ] || echo "node_address = $NODE_SIDE_IP")
$([ "${TWO_PORTS:-0}" = 0 ] || [ -z "$fam" ] || echo "node_address6 = $NODE_SIDE_IP6")
allowed_clients = $allowed
idle = backoff
backoff_us = 50

[placement]
algorithm = $algo
vnodes = $vnodes

[timeouts]
request_ms = $request_ms
arp_retry_ms = 100
arp_attempts = 5

[control]
socket = $sd/control$rs.sock
state_file = $sd/state$rs
EOF
	[ -z "$routes" ] || printf '\n[route]\n%s\n' "$routes"
	members=${members:-$NODES}
	[[ $members =~ ^[0-9]+$ ]] && [ "$members" -ge 1 ] && [ "$members" -le "$NODES" ] ||
		die "config: --members must be 1..$NODES"
	for i in $(seq 1 "$members"); do
		echo
		echo "[node node$i]"
		if [ "$nodes6" = 1 ]; then
			mac=NODE${i}_IP6
			echo "address = [${!mac}]:$mc_port"
		else
			echo "address = $(node_ip "$i"):$mc_port"
		fi
		echo "weight = 1"
		if [ "$static" = 1 ]; then
			mac=NODE${i}_MAC
			echo "mac = ${!mac}"
		fi
	done
}

# ---------------------------------------------------------------- main

[ $# -ge 1 ] || die "usage: $prog up|down|status|exec|router-start|router-stop|config [options]"
cmd=$1
shift
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) nodes=$2; shift 2 ;;
	--routers) routers=$2; shift 2 ;;
	--prefix) prefix=$2; shift 2 ;;
	--no-huge) force_nohuge=1; shift ;;
	--hugepages) huge_pages=$2; shift 2 ;;
	--routed) routed=1; shift ;;
	--vlan) vlan=$2; shift 2 ;;
	--two-ports) two_ports=1; shift ;;
	--ipv6) ipv6=1; args+=("$1"); shift ;; # up: addresses; config: the fleet's family
	*) args+=("$1"); shift ;;
	esac
done
[[ $prefix =~ ^[a-z][a-z0-9]{0,11}$ ]] || die "--prefix must be 1-12 of [a-z0-9], starting with a letter"
[[ $nodes =~ ^[0-9]+$ ]] || die "--nodes must be a number"
[[ $routers =~ ^[0-9]+$ ]] || die "--routers must be a number"

case $cmd in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
exec)
	[ ${#args[@]} -ge 2 ] || die "exec ROLE CMD..."
	role=${args[0]}
	exec ip netns exec "$(ns_name "$role")" "${args[@]:1}"
	;;
router-start) cmd_router_start "${args[@]}" ;;
router-stop) cmd_router_stop "${args[@]}" ;;
config) cmd_config "${args[@]}" ;;
*) die "unknown command $cmd (up|down|status|exec|router-start|router-stop|config)" ;;
esac
