#!/usr/bin/env bash
# Run one libFuzzer target on a scratch copy of its seed corpus (the committed corpus is never
# written) for RINGWAY_FUZZ_SECONDS seconds (default 60).
#   usage: run-fuzzer.sh FUZZER_BINARY CORPUS_DIR
# Fails on a non-zero libFuzzer exit (crash, leak, timeout, OOM) and on any sanitizer report in
# its output, including UBSan reports that did not stop the run. Crash inputs are kept in
# $RINGWAY_FUZZ_ARTIFACTS (default: ./fuzz-artifacts under the current directory).
set -uo pipefail

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -d "$2" ]; then
	echo "usage: $0 FUZZER_BINARY CORPUS_DIR" >&2
	exit 2
fi
fuzzer=$1
corpus=$2
name=$(basename "$fuzzer")
seconds=${RINGWAY_FUZZ_SECONDS:-60}
case $seconds in
'' | *[!0-9]*)
	echo "run-fuzzer: RINGWAY_FUZZ_SECONDS must be a whole number, not '$seconds'" >&2
	exit 2
	;;
esac
artifacts=${RINGWAY_FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
mkdir -p "$artifacts"

work=$(mktemp -d "${TMPDIR:-/tmp}/ringway-fuzz-$name.XXXXXX")
log=$work/log
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp -R "$corpus/." "$work/corpus/"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

echo "run-fuzzer: $name for ${seconds}s on a copy of $corpus ($(ls "$corpus" | wc -l) seeds)"
# timeout: a hung target must not hang the suite (libFuzzer stops itself after max_total_time).
timeout --kill-after=10 $((seconds + 120)) "$fuzzer" -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
	"$work/corpus" >"$log" 2>&1
rc=$?
tail -n 25 "$log"

reports=$(grep -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: (Address|Undefined|Leak)' "$log" | head -n 5)
if [ $rc -ne 0 ] || [ -n "$reports" ]; then
	echo "run-fuzzer: $name FAILED (exit $rc); inputs kept in $artifacts" >&2
	[ -n "$reports" ] && printf '%s\n' "$reports" >&2
	exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
echo "run-fuzzer: $name passed (${runs:-?} runs)"
