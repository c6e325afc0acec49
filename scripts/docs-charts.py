#!/usr/bin/env python3
"""The documentation's benchmark charts, drawn from the tables of docs/performance.md (the
figures as recorded there, not a new run): the line-rate chart of scripts/bench.sh linerate
(tests/bench/linerate/linerate.py's chart(), the same gnuplot script) from the table under
"Rerun on the sixth round's code, with the memif fix". Called by scripts/docs-pictures.sh.

  docs-charts.py SOURCE_ROOT OUT_DIR"""
import importlib.util
import os
import re
import sys
import tempfile

root, out = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location(
    'linerate', os.path.join(root, 'tests', 'bench', 'linerate', 'linerate.py'))
linerate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(linerate)

HEADING = "### Rerun on the sixth round's code, with the memif fix"
text = open(os.path.join(root, 'docs', 'performance.md'), encoding='utf-8').read()
if HEADING not in text:
    sys.exit(f'docs-charts: no heading "{HEADING}" in docs/performance.md')
lines = text[text.index(HEADING):].split('\n')
start = next(i for i, l in enumerate(lines) if l.startswith('| case |'))
rows = []
for l in lines[start + 2:]:
    if not l.startswith('|'):
        break
    rows.append([c.strip() for c in l.strip('|').split('|')])


def num(s):
    """'>= 2,000,000 (the search's top)' -> 2000000; '1.4 / 11.7' -> (1.4, 11.7)."""
    m = re.search(r'[\d,]+(\.\d+)?', s)
    return float(m.group(0).replace(',', ''))


cases = []
for r in rows:
    name = r[0].replace(' ', '_')
    lat = []
    for frac, cell in zip((0.1, 0.5, 0.9), r[6:9]):
        p50, p99 = (num(x) for x in cell.split('/'))
        lat.append({'fraction': frac, 'p50_us': p50, 'p99_us': p99})
    cases.append({'case': name, 'workers': int(r[1]), 'zero_loss_rps': num(r[2]),
                  'latency': lat})
doc = {'cases': cases, 'loss_max': '0.001%'}
with tempfile.TemporaryDirectory() as tmp:
    linerate.chart(doc, os.path.join(out, 'linerate.png'), os.path.join(tmp, 'linerate'))
print(f'docs-charts: docs/performance.md ({len(cases)} cases) -> {out}/linerate.png')
