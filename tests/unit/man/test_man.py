#!/usr/bin/env python3
"""The man pages (docs/man, built into BUILD/docs/man): each renders without a warning
(`groff -ww -man -z`, `mandoc -T lint` when installed, `man -l` to text), ringway.conf(5)
holds every key `ringway --check` prints, in its section, and ringwayctl(8) every command
`ringwayctl --help` lists. Checked against the binaries, not against the lists the pages
are made from, and each check is shown to fail on a page that lacks what it looks for.
TAP output; 77 (skip) without groff.
  test_man.py MANDIR RINGWAY RINGWAYCTL SAMPLE_CONFIG
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

mandir, ringway, ringwayctl, sample = sys.argv[1:5]
if shutil.which("groff") is None:
    print("1..0 # SKIP groff not installed")
    sys.exit(77)
n = 0
failed = 0


def ok(cond, what, detail=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))
    if not cond:
        failed += 1
        for line in str(detail).splitlines()[:20]:
            print("# " + line)


def lint(path):
    """Warnings of groff, mandoc and man for one page: a list of lines."""
    env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80")
    out = []
    r = subprocess.run(["groff", "-ww", "-man", "-z", path], stderr=subprocess.PIPE,
                       universal_newlines=True, env=env)
    out += [l for l in r.stderr.splitlines() if l]
    if shutil.which("mandoc"):
        r = subprocess.run(["mandoc", "-T", "lint", path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        out += [l for l in r.stdout.splitlines() if l]
    if shutil.which("man"):
        r = subprocess.run(["man", "--warnings", "-l", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, env=env)
        out += [l for l in r.stderr.splitlines() if l]
        if r.returncode != 0 or len(r.stdout) < 200:
            out.append("man -l %s: exit %d, %d bytes" % (path, r.returncode, len(r.stdout)))
    return out


def conf_keys(page_text):
    """{section: {keys}} of ringway.conf(5): .SS [section] then .TP / \\fBkey\\fR = ..."""
    keys, sec = {}, None
    for line in page_text.splitlines():
        m = re.match(r"\.SS \[(.*)\]$", line)
        if m:
            sec = m.group(1)
            keys.setdefault(sec, set())
        m = re.match(r"\\fB([a-z0-9_]+)\\fR = ", line)
        if m and sec is not None:
            keys[sec].add(m.group(1))
    return keys


def ctl_commands(page_text):
    return set(re.findall(r"^\.TP\n\\fB([a-z\\-]+)\\fR", page_text, re.M))


pages = ["ringway.8", "ringway.conf.5", "ringwayctl.8", "ringway-sync.8", "ringway-plan.1",
         "ringway-loadgen.1"]
print("1..%d" % (len(pages) + 6))
for p in pages:
    path = os.path.join(mandir, p)
    if not os.path.exists(path):
        ok(False, "%s was built" % p)
        continue
    w = lint(path)
    ok(not w, "%s renders without a warning (groff -ww, mandoc -T lint, man -l)" % p,
       "\n".join(w))

# Every key ringway --check prints, under its section.
dump = subprocess.run([ringway, "--config", sample, "--check"], stdout=subprocess.PIPE,
                      stderr=subprocess.DEVNULL, universal_newlines=True).stdout
want, sec = {}, None
for line in dump.splitlines():
    m = re.match(r"\[(\w+)(?: \S+)?\]$", line)
    if m:
        sec = {"gutter": "node"}.get(m.group(1), m.group(1))
        sec = sec + " NAME" if sec == "node" else sec
        want.setdefault(sec, set())
    m = re.match(r"(\w+) =", line)
    if m and sec:
        want[sec].add(m.group(1))
total = sum(len(v) for v in want.values())
conf = open(os.path.join(mandir, "ringway.conf.5")).read()
have = conf_keys(conf)
missing = ["[%s] %s" % (s, k) for s in want for k in sorted(want[s]) if k not in have.get(s, ())]
ok(total > 50 and not missing,
   "ringway.conf(5) names all %d keys of ringway --check in their sections" % total,
   "missing: %s" % missing)
cut = conf.replace("\\fBvnodes\\fR = ", "\\fBvnodez\\fR = ")
ok("vnodes" not in conf_keys(cut).get("placement", ()),
   "the key check sees a key that is missing (vnodes taken out)")

# Every command ringwayctl --help lists.
helptext = subprocess.run([ringwayctl, "--help"], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout
block = re.search(r"^commands:\n((?:  .*\n)+)", helptext, re.M).group(1)
cmds = [l.split()[0] for l in block.splitlines()]
ctl = open(os.path.join(mandir, "ringwayctl.8")).read()
have_cmds = {c.replace("\\-", "-") for c in ctl_commands(ctl)}
missing = [c for c in cmds if c not in have_cmds]
ok(len(cmds) >= 15 and not missing,
   "ringwayctl(8) describes all %d commands of ringwayctl --help" % len(cmds),
   "missing: %s" % missing)
cut = ctl.replace(".TP\n\\fBwarmup\\fR", ".TP\n\\fBwarmupp\\fR")
ok("warmup" not in ctl_commands(cut), "the command check sees a missing command")

# The lint itself reports a bad page.
with tempfile.NamedTemporaryFile("w", suffix=".8", delete=False) as f:
    f.write('.TH BAD 8 "2026-01-01" x y\n.SH NAME\nbad \\- a page\n.XY unknown macro\n')
w = lint(f.name)
os.unlink(f.name)
ok(bool(w), "a page with an unknown macro is reported", "no warning at all")

# ringway --help and ringway-sync --help are real help texts, not a bare usage line.
r = subprocess.run([ringway, "--help"], stdout=subprocess.PIPE, universal_newlines=True)
ok(r.returncode == 0 and r.stdout.count("\n") >= 15 and "[placement]" in r.stdout,
   "ringway --help: exit 0, the options, the sections", r.stdout)
sys.exit(1 if failed else 0)
