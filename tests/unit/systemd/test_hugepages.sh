#!/usr/bin/env bash
# config/ringway-hugepages (run by ringway-hugepages.service) on a fake sysfs tree
# (RINGWAY_SYSFS): it raises a reservation that is short, never lowers one, accepts 2M / 1G
# / 2048kB and @NODE, refuses a malformed entry and a size the host lacks with exit 1 and a
# line naming it, and passes with no argument (routers on --no-huge). What only a kernel
# does (a write that reserves fewer pages than asked, a read-only /sys) is the boot test's:
# e2e-systemd-boot. TAP output.
#   test_hugepages.sh SCRIPT
set -u
script=$1
tmp=$(mktemp -d /tmp/ringway-hugepages-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
two=$tmp/kernel/mm/hugepages/hugepages-2048kB
giga=$tmp/devices/system/node/node0/hugepages/hugepages-1048576kB
mkdir -p "$two" "$giga"
n=0 failed=0
run() { # name, want-exit, want-output-regex, args...
	local name=$1 want=$2 re=$3 out rc
	shift 3
	n=$((n + 1))
	out=$(RINGWAY_SYSFS=$tmp sh "$script" "$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ] && printf '%s\n' "$out" | grep -Eq -- "$re"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name (exit $rc, want $want)"
		printf '%s\n' "$out" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}
value() { # name, file, want
	n=$((n + 1))
	if [ "$(cat "$2")" = "$3" ]; then echo "ok $n - $1"; else
		echo "not ok $n - $1: $(cat "$2"), want $3"; failed=$((failed + 1)); fi
}
echo "1..9"
echo 3 >"$two/nr_hugepages"
echo 0 >"$giga/nr_hugepages"
run "no argument: nothing needed" 0 '^$'
run "enough reserved: checked, not written" 0 '2048kB: 3 pages reserved system-wide' 2M:2
value "a larger reservation is not lowered" "$two/nr_hugepages" 3
run "short: raised" 0 '2048kB: 10 pages reserved' 2048kB:10
value "the raise is written" "$two/nr_hugepages" 10
run "1G on a NUMA node" 0 '1048576kB: 4 pages reserved on NUMA node 0' 1G:4@0
run "a size the host lacks: exit 1, named" 1 'no 1048576kB hugepages system-wide' 2M:1 1G:1
run "malformed: exit 1, named" 1 "'2M': expected SIZE:COUNT" 2M
run "one bad entry fails the unit, the good ones still done" 1 "'x:1': expected" 2M:12 x:1
[ "$failed" = 0 ]
