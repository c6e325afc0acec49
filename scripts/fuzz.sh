#!/usr/bin/env bash
# Long fuzzing runs (scripts/test.sh runs each target briefly):
#   1. every libFuzzer target of the sanitizer build (clang, ASan+UBSan, DPDK-free: build-san,
#      as scripts/test.sh builds it) through tests/fuzz/run-fuzzer.sh, RINGWAY_FUZZ_SECONDS each
#      on a scratch copy of its seed corpus;
#   2. the data plane's frame fuzzer (tests/dp/test_fuzz_frames.c, main build): random and
#      mutated Ethernet frames through both workers, identity exact, no mbuf lost, for
#      RINGWAY_FUZZ_FRAMES frames from each seed in RINGWAY_FUZZ_SEEDS.
# Prints the executions of every run and exits non-zero when any of them failed. Crash inputs
# are kept in fuzz-artifacts/ (RINGWAY_FUZZ_ARTIFACTS).
#
# Environment:
#   RINGWAY_FUZZ_SECONDS   seconds per libFuzzer target (default 600)
#   RINGWAY_FUZZ_TARGETS   targets to run (default: every fuzz test of build-san)
#   RINGWAY_FUZZ_FRAMES    frames per seed for the frame fuzzer (default 20000000)
#   RINGWAY_FUZZ_SEEDS     seeds for the frame fuzzer (default "1 2 3"); empty: skip it
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export RINGWAY_FUZZ_SECONDS=${RINGWAY_FUZZ_SECONDS:-600}
frames=${RINGWAY_FUZZ_FRAMES:-20000000}
seeds=${RINGWAY_FUZZ_SEEDS-1 2 3}
failed=0
summary=()

note() { printf '== %s\n' "$*"; }

# DPDK runtime folders the frame fuzzer makes are its own to remove, also when it dies.
dpdk_before=$(ls -1 /var/run/dpdk 2>/dev/null | sort)
cleanup() {
	local d
	for d in $(comm -13 <(printf '%s\n' "$dpdk_before") \
		<(ls -1 /var/run/dpdk 2>/dev/null | sort) | grep '^dp_fuzz_'); do
		rm -rf "/var/run/dpdk/$d"
	done
}
trap cleanup EXIT

setup() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1
	else
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1
	fi || { cat "$dir.setup.log"; return 1; }
}

note "sanitizer build (clang, ASan+UBSan, libFuzzer)"
if CC=clang setup build-san --werror -Ddpdk=disabled -Dtests=enabled -Dfuzz=enabled \
	-Dbench=false -Db_sanitize=address,undefined -Db_lundef=false && ninja -C build-san; then
	targets=${RINGWAY_FUZZ_TARGETS:-$(meson test -C build-san --list --suite fuzz 2>/dev/null |
		sed -n 's/^[^ ]*:fuzz \/ \([^ ]*\)$/\1/p')}
	for t in $targets; do
		note "$t for ${RINGWAY_FUZZ_SECONDS}s"
		log=$(mktemp)
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
			meson test -C build-san --no-rebuild --print-errorlogs --verbose "$t" \
			--timeout-multiplier 0 >"$log" 2>&1
		rc=$?
		runs=$(sed -n 's/.*run-fuzzer: .* passed (\([0-9?]*\) runs).*/\1/p' "$log" | tail -n 1)
		if [ $rc -eq 0 ]; then
			summary+=("$t: ${runs:-?} executions in ${RINGWAY_FUZZ_SECONDS}s, passed")
		else
			tail -n 40 "$log"
			summary+=("$t: FAILED (see fuzz-artifacts/)")
			failed=$((failed + 1))
		fi
		rm -f "$log"
	done
else
	summary+=("sanitizer build: FAILED")
	failed=$((failed + 1))
fi

if [ -n "$seeds" ]; then
	note "main build (frame fuzzer)"
	if setup build --werror -Dtests=enabled && ninja -C build tests/dp/dp_test_fuzz_frames; then
		for s in $seeds; do
			note "frame fuzzer: $frames frames, seed $s"
			out=$(RINGWAY_FUZZ_FRAMES=$frames RINGWAY_FUZZ_SEED=$s \
				build/tests/dp/dp_test_fuzz_frames 2>&1)
			rc=$?
			line=$(printf '%s\n' "$out" | grep '^frames ' | tail -n 1)
			if [ $rc -eq 0 ]; then
				summary+=("dp frame fuzzer: $line, passed")
			else
				printf '%s\n' "$out" | tail -n 20
				summary+=("dp frame fuzzer seed $s: FAILED")
				failed=$((failed + 1))
			fi
		done
	else
		summary+=("main build: FAILED")
		failed=$((failed + 1))
	fi
fi

note "summary"
printf '%s\n' "${summary[@]}"
[ $failed -eq 0 ]
