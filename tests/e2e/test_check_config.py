#!/usr/bin/env python3
"""e2e: `ringway --check` accepts a good sandbox config and refuses bad ones: exit status
non-zero, and the error names the file, the line and the key. No sandbox needed: --check
must exit before touching any port.

Environment: RINGWAY.
"""
import os
import re
import subprocess
import sys
import tempfile

import harness as h

GOOD = """[router]
address = 198.18.0.1
listen_ports = 11211
allowed_clients = 198.18.0.0/25
idle = backoff

[placement]
algorithm = ring
vnodes = 160

[control]
socket = {dir}/control.sock
state_file = {dir}/state

[node node1]
address = 198.18.1.1:11211
weight = 1

[node node2]
address = 198.18.1.2:11211
weight = 1
"""

# (what, replace this line of GOOD, with this, the key the error must name)
BAD = [
    ("zero weight", "weight = 1", "weight = 0", "weight"),
    ("unknown key", "vnodes = 160", "vnodez = 160", "vnodez"),
    ("address outside IPv4", "address = 198.18.1.2:11211", "address = 198.18.1.300:11211",
     "address"),
    ("bad port", "listen_ports = 11211", "listen_ports = 99999", "listen_ports"),
    ("bad prefix", "allowed_clients = 198.18.0.0/25", "allowed_clients = 198.18.0.1/25",
     "allowed_clients"),
    ("unknown algorithm", "algorithm = ring", "algorithm = spiral", "algorithm"),
    ("bad idle mode", "idle = backoff", "idle = sometimes", "idle"),
]


def run_check(ringway, path, tag):
    args = [ringway, "-l", "0", "--no-pci", "--no-huge", "-m", "64", "--in-memory",
            "--file-prefix", "rwchk%s%d" % (tag, os.getpid()), "--log-level", "lib.*:error",
            "--", "--config", path, "--check"]
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    finally:
        h.remove_dpdk_runtime("rwchk%s%d" % (tag, os.getpid()))
    return r.returncode, r.stdout.decode(errors="replace")


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e ringway --check")
    with tempfile.TemporaryDirectory(prefix="rwcheck") as d:
        good = GOOD.format(dir=d)
        path = os.path.join(d, "good.conf")
        with open(path, "w") as f:
            f.write(good)
        rc, out = run_check(ringway, path, "g")
        t.eq(rc, 0, "good config: --check exits 0 (%s)" % out.strip()[-200:])
        # docs/config.md: --check prints the whole configuration, defaults filled in, as a
        # file that loads back.
        t.ok("\nmtu = 1500\n" in out and "\n[timeouts]\nrequest_ms = 1000\n" in out,
             "good config: --check prints the defaults the file left out")
        dumped = os.path.join(d, "dumped.conf")
        with open(dumped, "w") as f:
            f.write(out[out.index("# ringway: "):])
        rc2, out2 = run_check(ringway, dumped, "d")
        t.eq(rc2, 0, "the printed configuration loads back (%s)" % out2.strip()[-200:])
        for i, (what, old, new, key) in enumerate(BAD):
            lines = good.split("\n")
            # Replace the LAST occurrence (weight = 1 appears twice: node2's).
            idx = max(j for j, ln in enumerate(lines) if ln == old)
            lines[idx] = new
            name = "bad%d.conf" % i
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write("\n".join(lines))
            rc, out = run_check(ringway, path, "b%d" % i)
            t.ok(rc != 0, "%s: --check exits non-zero (%d)" % (what, rc))
            line_no = idx + 1
            t.ok(re.search(r"%s:%d\b" % (re.escape(name), line_no), out) is not None,
                 "%s: error names %s:%d (%r)" % (what, name, line_no, out.strip()[-200:]))
            t.ok(key in out, "%s: error names key %r" % (what, key))
        rc, out = run_check(ringway, os.path.join(d, "missing.conf"), "m")
        t.ok(rc != 0 and "missing.conf" in out, "missing file: non-zero exit naming the file")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
