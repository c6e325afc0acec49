#!/usr/bin/env bash
# config/ringway.service and config/ringway@.service pass `systemd-analyze verify` (offline:
# no systemd needs to run) with no warning at all: verify exits 0 even on unknown keys or
# values it ignores, so any output fails the test. /usr/sbin/ringway is replaced by the built
# binary and /usr/libexec/ringway/ringway-hugepages by the source's script (verify checks that
# ExecStart is executable); the template is verified through an instance. A unit with a bad
# key must be reported, so the check itself can fail.
# TAP output; exit 77 (skip) when systemd-analyze is missing (setup-deps installs systemd).
#   test_units.sh SOURCE_DIR RINGWAY_BINARY
set -u
src=$1 ringway=$2
command -v systemd-analyze >/dev/null || { echo "1..0 # SKIP systemd-analyze not installed"; exit 77; }
tmp=$(mktemp -d /tmp/ringway-units-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
check() { # name, unit file to verify, expect_clean (1) or expect_warning (0)
	local out
	n=$((n + 1))
	out=$(systemd-analyze verify --man=no "$2" 2>&1)
	if { [ "$3" = 1 ] && [ -z "$out" ]; } || { [ "$3" = 0 ] && [ -n "$out" ]; }; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		printf '%s\n' "$out" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}
for u in ringway.service ringway@.service ringway-hugepages.service; do
	sed -e "s|/usr/sbin/ringway|$ringway|g" \
		-e "s|/usr/libexec/ringway/ringway-hugepages|$src/config/ringway-hugepages|g" \
		"$src/config/$u" >"$tmp/$u"
done
ln -s ringway@.service "$tmp/ringway@edge1.service"
cp "$tmp/ringway.service" "$tmp/broken.service"
sed -i 's/^\[Install\]/Restart=sometimes\n[Install]/' "$tmp/broken.service"
echo "1..4"
check "ringway.service verifies without a warning" "$tmp/ringway.service" 1
check "ringway@.service (instance edge1) verifies without a warning" "$tmp/ringway@edge1.service" 1
check "ringway-hugepages.service verifies without a warning" "$tmp/ringway-hugepages.service" 1
check "a bad value in a unit is reported (the check can fail)" "$tmp/broken.service" 0
[ "$failed" = 0 ]
