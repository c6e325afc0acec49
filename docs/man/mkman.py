#!/usr/bin/env python3
"""Fill a man page template (docs/man/*.in) from the project's own lists, so the pages
cannot drift from the code:

  @CONFIG_KEYS@  the key table of app/ringway/config.c (RW_CFG_FOREACH_KEY), as docs/config.md
                 holds it (the config unit test keeps that table identical to the code's)
  @COMMANDS@     the control commands of lib/control (CTL_FOREACH_CMD and the prefixes), as
                 `ringwayctl --help` prints them from the parser's table, each with its
                 description from docs/man/commands.txt (a command without one, or a
                 description of no command, is an error)
  @COUNTERS@ @DROPS@ @GAUGES@  DP_FOREACH_COUNTER / _DROP / _GAUGE of lib/dataplane/dataplane.h
                 with the comment of each row
  @HELP@         the --help text of the page's program (--help-of BINARY), verbatim
  @VERSION@      the project version
  @DATE@         SOURCE_DATE_EPOCH's day, else today

  mkman.py --template IN --out OUT --version V [--config-md F] [--ringwayctl BIN
           --commands F] [--dataplane-h F] [--help-of BIN]
"""
import argparse
import os
import re
import subprocess
import sys
import textwrap
import time


def roff(text):
    """Plain text -> roff: backslashes, leading dots/quotes, `code` as bold."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = re.sub(r"`([^`]*)`", r"\\fB\1\\fR", text)
    return text


def roff_line(text):
    t = roff(text)
    return "\\&" + t if t[:1] in (".", "'") else t


def wrap(page):
    """Text lines (not requests, not inside .nf/.fi) wrapped at 78 columns, as mandoc's
    style check asks; a piece that would start with a dot or quote gets \\&."""
    out = []
    nofill = False
    tag = False  # the line after .TP is the tag: one line
    for line in page.split("\n"):
        was_tag, tag = tag, line.split(" ")[0] == ".TP"
        if line.startswith((".", "'")):
            nofill = {".nf": True, ".fi": False}.get(line.split(" ")[0], nofill)
            out.append(line)
        elif nofill or was_tag or len(line) <= 78:
            out.append(line)
        else:
            for piece in textwrap.wrap(line, 78, break_long_words=False,
                                       break_on_hyphens=False):
                out.append("\\&" + piece if piece.startswith((".", "'")) else piece)
    return "\n".join(out)


def config_keys(path):
    rows = []
    in_table = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("| section | key | accepts | default | meaning |"):
            in_table = True
            continue
        if in_table:
            if line.startswith("|---"):
                continue
            if not line.startswith("|"):
                break
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cells) != 5:
                sys.exit("mkman: %s: a table row without 5 cells: %s" % (path, line))
            rows.append(cells)
    if not rows:
        sys.exit("mkman: %s: no key table" % path)
    out = []
    section = None
    for sec, key, accepts, default, meaning in rows:
        sec = sec.strip("`")
        if sec != section:
            section = sec
            out.append(".SS %s" % roff(sec))
        out.append(".TP")
        out.append("\\fB%s\\fR = \\fI%s\\fR" % (roff(key.strip("`")), roff(accepts)))
        out.append(roff_line("%s Default: %s." % (meaning[0].upper() + meaning[1:] + ".",
                                                   default)))
    return "\n".join(out)


def commands(ringwayctl, descfile):
    text = subprocess.run([ringwayctl, "--help"], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True).stdout
    m = re.search(r"^commands:\n((?:  .*\n)+)", text, re.M)
    if not m:
        sys.exit("mkman: %s --help has no commands: block" % ringwayctl)
    usage = [l[2:] for l in m.group(1).splitlines()]
    desc = {}
    name = None
    for line in open(descfile, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        if not line[0].isspace():
            name, _, rest = line.partition(":")
            desc[name.strip()] = rest.strip()
        elif name is not None:
            desc[name] += " " + line.strip()
    out = []
    seen = set()
    for u in usage:
        cmd = u.split()[0]
        seen.add(cmd)
        if cmd not in desc:
            sys.exit("mkman: command '%s' (ringwayctl --help) has no description in %s"
                     % (cmd, descfile))
        out.append(".TP")
        words = u.split("  (")[0].split(" ", 1)
        out.append("\\fB%s\\fR%s" % (roff(words[0]),
                                      " " + roff(words[1]) if len(words) > 1 else ""))
        out.append(roff_line(desc[cmd]))
    extra = sorted(set(desc) - seen)
    if extra:
        sys.exit("mkman: %s describes commands ringwayctl does not have: %s"
                 % (descfile, ", ".join(extra)))
    return "\n".join(out)


def xmacro(path, macro):
    """Rows of `#define MACRO(_) _(..., "name") /* doc */ \\ ...`: [(name, doc)]."""
    src = open(path, encoding="utf-8").read()
    m = re.search(r"#define %s\(_\)((?:.*\\\n)*.*\n)" % macro, src)
    if not m:
        sys.exit("mkman: %s: no #define %s" % (path, macro))
    body = re.sub(r"\\\n", "\n", m.group(1))
    body = re.sub(r"\n\s*", " ", body)
    rows = re.findall(r'_\(\s*(?:[\w ]+,\s*)+"([^"]+)"\s*\)\s*(?:/\*(.*?)\*/)?', body)
    if not rows:
        sys.exit("mkman: %s: %s has no rows" % (path, macro))
    return rows


def xmacro_roff(path, macro, prefix=""):
    out = []
    for name, doc in xmacro(path, macro):
        out.append(".TP")
        out.append("\\fB%s%s\\fR" % (prefix, roff(name)))
        doc = " ".join(doc.split())
        out.append(roff_line(doc[0].upper() + doc[1:] + "." if doc else "(no description)"))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--template", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--config-md")
    ap.add_argument("--ringwayctl")
    ap.add_argument("--commands")
    ap.add_argument("--dataplane-h")
    ap.add_argument("--help-of")
    a = ap.parse_args()
    page = open(a.template, encoding="utf-8").read()
    # The page's date: SOURCE_DATE_EPOCH when set (reproducible builds), else today.
    when = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", time.time())))
    subst = {"@VERSION@": lambda: a.version, "@DATE@": lambda: time.strftime("%Y-%m-%d", when)}
    if a.config_md:
        subst["@CONFIG_KEYS@"] = lambda: config_keys(a.config_md)
    if a.ringwayctl:
        subst["@COMMANDS@"] = lambda: commands(a.ringwayctl, a.commands)
    if a.dataplane_h:
        subst["@COUNTERS@"] = lambda: xmacro_roff(a.dataplane_h, "DP_FOREACH_COUNTER")
        subst["@DROPS@"] = lambda: xmacro_roff(a.dataplane_h, "DP_FOREACH_DROP", "drop_")
        subst["@GAUGES@"] = lambda: xmacro_roff(a.dataplane_h, "DP_FOREACH_GAUGE")
    if a.help_of:
        def helptext():
            r = subprocess.run([a.help_of, "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True)
            if r.returncode != 0:
                sys.exit("mkman: %s --help exits %d" % (a.help_of, r.returncode))
            lines = [roff_line(l) if l.strip() else "" for l in r.stdout.splitlines()]
            return ".nf\n" + "\n".join(lines) + "\n.fi"
        subst["@HELP@"] = helptext
    for token, fn in subst.items():
        if token in page:
            page = page.replace(token, fn())
    page = wrap(page)
    left = re.findall(r"@[A-Z_]+@", page)
    if left:
        sys.exit("mkman: %s: nothing fills %s" % (a.template, ", ".join(sorted(set(left)))))
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
