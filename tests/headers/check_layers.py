#!/usr/bin/env python3
"""Layers never call back up: the file-level call graph of a library's objects has no cycle.

For each object directory given (a static library's `<name>.a.p`), `nm` says which functions
each object defines (T) and uses (U); a file calls another when it uses a function the other
defines. The graph is printed; a cycle (a file calling, directly or not, a file that calls
back into it) fails the check with the cycle named. Run by meson as `layers-<library>`.
"""
import glob
import os
import subprocess
import sys


def graph(objdir):
    defs, uses = {}, {}
    for o in sorted(glob.glob(os.path.join(objdir, "*.o"))):
        name = os.path.basename(o)[:-2]
        out = subprocess.run(["nm", o], check=True, capture_output=True, text=True).stdout
        uses[name] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == "U":
                uses[name].add(f[1])
            elif len(f) == 3 and f[1] == "T":
                defs[f[2]] = name
    return {a: sorted({defs[s] for s in u if s in defs and defs[s] != a})
            for a, u in uses.items()}


def find_cycle(edges):
    state = {}

    def visit(v, path):
        state[v] = 1
        for w in edges[v]:
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if state.get(w) is None:
                c = visit(w, path + [w])
                if c:
                    return c
        state[v] = 2
        return None

    for v in edges:
        if state.get(v) is None:
            c = visit(v, [v])
            if c:
                return c
    return None


def main():
    bad = 0
    for objdir in sys.argv[1:]:
        edges = graph(objdir)
        if not edges:
            print("%s: no objects" % objdir)
            bad = 1
            continue
        print(os.path.basename(objdir))
        for a, b in edges.items():
            print("  %-14s -> %s" % (a, ", ".join(b) or "-"))
        cycle = find_cycle(edges)
        if cycle:
            print("  CYCLE: " + " -> ".join(cycle))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
