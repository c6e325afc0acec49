#!/usr/bin/env bash
# Render the documentation's pictures from the text they are kept as:
#   docs/img/NAME.dot (Graphviz)           -> docs/img/NAME.png
#   the line-rate table of docs/performance.md -> docs/img/linerate.png (scripts/docs-charts.py,
#                                             the chart of scripts/bench.sh linerate, gnuplot)
# Run it after editing a .dot file or that table, look at the PNGs, and commit both. Needs
# graphviz and gnuplot (scripts/setup-deps.sh installs them).
#   scripts/docs-pictures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 0 ] || { echo "usage: scripts/docs-pictures.sh" >&2; exit 2; }
for t in dot gnuplot; do
	command -v $t >/dev/null || { echo "docs-pictures: needs $t (scripts/setup-deps.sh)" >&2; exit 1; }
done
for src in docs/img/*.dot; do
	png=${src%.dot}.png
	dot -Tpng -Gdpi=110 -o "$png" "$src"
	echo "docs-pictures: $src -> $png"
done
python3 scripts/docs-charts.py . docs/img
