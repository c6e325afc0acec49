#!/usr/bin/env bash
# Temporary demo until the router's sandbox demo exists: install dependencies, build the
# DPDK-free planner, and show what adding an 11th node to a 10-node fleet costs under every
# placement algorithm (20,000 keys user:0 .. user:19999).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=build-demo

bash scripts/setup-deps.sh
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Ddpdk=disabled -Dtests=disabled -Dbench=false >"$build.setup.log" 2>&1 ||
		{ cat "$build.setup.log" >&2; exit 1; }
fi
ninja -C "$build" -j2 app/ringway-plan/ringway-plan
echo
echo "\$ ringway-plan compare --nodes 10 --add node10 --generate 20000"
"$build/app/ringway-plan/ringway-plan" compare --nodes 10 --add node10 --generate 20000
