#!/usr/bin/env bash
# Render the documentation's diagrams: every docs/img/NAME.dot (Graphviz, the source kept in
# the tree) to docs/img/NAME.png beside it. Run after editing a .dot and commit both; the
# `docs` check of the headers suite fails when a page links a picture that is not there.
# Needs graphviz (scripts/setup-deps.sh installs it).
#   scripts/docs-pictures.sh            render every diagram
#   scripts/docs-pictures.sh --check    exit 1 when a PNG is missing or older than its .dot
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*) echo "usage: scripts/docs-pictures.sh [--check]" >&2 && exit 2 ;;
esac
command -v dot >/dev/null || { echo "docs-pictures: needs graphviz (dot)" >&2; exit 1; }
rc=0
for src in docs/img/*.dot; do
	png=${src%.dot}.png
	if [ $check = 1 ]; then
		if [ ! -f "$png" ] || [ "$src" -nt "$png" ]; then
			echo "docs-pictures: $png is missing or older than $src" >&2
			rc=1
		fi
		continue
	fi
	# 96 dpi for a page; -Gdpi keeps text sharp without making the file large
	dot -Tpng -Gdpi=110 -o "$png" "$src"
	echo "docs-pictures: $src -> $png"
done
exit $rc
