#!/usr/bin/env bash
# Run every test ringway has, on a fresh Debian 12 machine as root:
#   1. install dependencies (scripts/setup-deps.sh)
#   2. main build (gcc, -Werror, DPDK): headers, unit, dataplane, smoke-benchmark and end-to-end
#      suites
#   3. sanitizer build (clang, ASan+UBSan, DPDK-free libraries): unit suites again, and every
#      libFuzzer target for RINGWAY_FUZZ_SECONDS (default 60) each
#   4. a check that no DPDK runtime folder (/var/run/dpdk/*) made during the run was left
#      behind (each one left counts as a failure); longer fuzzing: scripts/fuzz.sh
# The last line is "N passed, N failed"; the exit status is non-zero when anything failed.
#
# Environment:
#   RINGWAY_FUZZ_SECONDS  seconds per fuzz target (default 60)
#   RINGWAY_SUITES        main-build suites to run (default "headers unit dp bench e2e")
#   RINGWAY_SKIP_SAN=1    skip the sanitizer build (quick local runs only)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

export RINGWAY_FUZZ_SECONDS=${RINGWAY_FUZZ_SECONDS:-60}
suites=${RINGWAY_SUITES:-headers unit dp bench e2e}
failures=0

note() { printf '== %s\n' "$*"; }

if ! bash scripts/setup-deps.sh; then
	echo "0 passed, 1 failed"
	exit 1
fi

# meson_setup DIR ARGS...: configure once, reconfigure when the tree changed.
meson_setup() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1
	else
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1
	fi || { cat "$dir.setup.log"; return 1; }
}

# DPDK runtime folders there before the run: every test must remove the ones it makes.
dpdk_runtime() { ls -1 /var/run/dpdk 2>/dev/null | sort; }
dpdk_before=$(dpdk_runtime)

# Results of earlier runs must not be counted again.
rm -f build/meson-logs/testlog-*.json build-san/meson-logs/testlog-*.json

build_ok=1
note "main build (gcc, -Werror)"
if meson_setup build --werror -Dtests=enabled && ninja -C build; then
	# Suites that have no tests yet are not an error: meson says so and runs nothing.
	for s in $suites; do
		if meson test -C build --list --suite "$s" >/dev/null 2>&1 &&
			[ -n "$(meson test -C build --list --suite "$s" 2>/dev/null)" ]; then
			note "suite $s"
			meson test -C build --no-rebuild --print-errorlogs --suite "$s" \
				--logbase "testlog-$s" || true
		fi
	done
else
	build_ok=0
	failures=$((failures + 1))
fi

if [ "${RINGWAY_SKIP_SAN:-0}" != 1 ]; then
	note "sanitizer build (clang, ASan+UBSan, DPDK-free)"
	if CC=clang meson_setup build-san --werror -Ddpdk=disabled -Dtests=enabled \
		-Dfuzz=enabled -Dbench=false -Db_sanitize=address,undefined -Db_lundef=false &&
		ninja -C build-san; then
		for s in unit fuzz; do
			if [ -n "$(meson test -C build-san --list --suite "$s" 2>/dev/null)" ]; then
				note "sanitizer suite $s"
				UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
					ASAN_OPTIONS=detect_leaks=1 \
					meson test -C build-san --no-rebuild --print-errorlogs \
					--suite "$s" --logbase "testlog-$s" || true
			fi
		done
	else
		failures=$((failures + 1))
	fi
fi

# A DPDK runtime folder a test or benchmark left behind is a failure of its own.
left=$(comm -13 <(printf '%s\n' "$dpdk_before") <(dpdk_runtime) | sed '/^$/d')
if [ -n "$left" ]; then
	note "DPDK runtime folders left in /var/run/dpdk by this run"
	printf '  /var/run/dpdk/%s\n' $left >&2
	failures=$((failures + 1))
fi

# Count every test result meson recorded in this run's logs.
counts=$(python3 - "$top" <<'PY'
import json, glob, sys, os
top = sys.argv[1]
passed = failed = skipped = 0
for d in ("build", "build-san"):
    for path in glob.glob(os.path.join(top, d, "meson-logs", "testlog-*.json")):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line).get("result", "")
                if r in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif r == "SKIP":
                    skipped += 1
                else:
                    failed += 1
                    print("FAILED: %s/%s (%s)" % (d, json.loads(line).get("name"), r), file=sys.stderr)
print(passed, failed, skipped)
PY
)
read -r passed failed skipped <<<"$counts"
failed=$((failed + failures))
[ "$build_ok" = 1 ] || echo "main build failed" >&2
if [ "${skipped:-0}" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
