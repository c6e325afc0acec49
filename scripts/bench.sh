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
# Figures on a shared 2-core machine move by 10-25% between runs: compare ratios within a run.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${RINGWAY_BENCH_BUILD:-build-bench}
results=$top/bench-results

# --- sections ------------------------------------------------------------------------------
SECTIONS=(placement)

# Placement lookups (ns, index vs binary search vs libmemcached), build time and memory at
# 10 / 100 / 1,000 / 10,000 members for every algorithm.
targets_placement=(tests/bench/placement/bench_placement)
section_placement() {
	"$build/tests/bench/placement/bench_placement" --out "$results/placement.json"
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
