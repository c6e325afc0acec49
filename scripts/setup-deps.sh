#!/usr/bin/env bash
# Install every Debian package that ringway's build, tests, demo and benchmarks use.
# Idempotent: packages already present are skipped by apt; run as root on Debian 12.
set -euo pipefail

PACKAGES=(
	# build
	build-essential meson ninja-build pkg-config clang llvm lld
	libdpdk-dev dpdk libbpf-dev libxdp-dev bpftool libxxhash-dev libnuma-dev
	# tests
	libcmocka-dev libclang-rt-14-dev valgrind python3
	# a real terminal for `ringwayctl top` (control_top_tty)
	tmux
	# real peers and clients for end-to-end tests
	memcached libmemcached-tools libmemcached-dev nutcracker
	# fleet: etcd for the membership store, libcurl + jansson for its v3 JSON gateway
	etcd-server etcd-client libcurl4-openssl-dev libjansson-dev
	# sandbox
	iproute2 iputils-ping netcat-openbsd procps psmisc kmod ethtool
	# benchmarks
	gnuplot-nox jq
	# operations: /metrics endpoint, a real Prometheus scrape, systemd unit checks
	libmicrohttpd-dev prometheus systemd
	# the unit's readiness and status lines (sd_notify: Type=notify, the drain state)
	libsystemd-dev
	# documentation: the diagrams of docs/img/*.dot (scripts/docs-pictures.sh)
	graphviz
	# the Debian package (scripts/package.sh) and its checks: lintian, man pages rendered
	# and linted, a real boot under systemd in a container (e2e-systemd-boot)
	dpkg-dev lintian groff-base man-db mandoc systemd-container
)

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-deps: must run as root (apt-get install)" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup-deps: all ${#PACKAGES[@]} packages present"
	exit 0
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The Debian memcached and nutcracker packages start system services we never use:
# our tests start their own instances inside namespaces.
for svc in memcached nutcracker etcd prometheus; do
	systemctl disable --now "$svc" >/dev/null 2>&1 || service "$svc" stop >/dev/null 2>&1 || true
done
echo "setup-deps: done"
