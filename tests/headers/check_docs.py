#!/usr/bin/env python3
"""The documentation's links and commands still hold (issue 29).

  check_docs.py SOURCE_ROOT [TOOL=PATH ...]

Checks README.md and docs/*.md:
  1. every relative link ([text](path), ![alt](path)) names a file or folder that exists, and
     every #anchor names a heading of its target page, by GitHub's rule (lowercase; every
     character that is not a letter, digit, space, '-' or '_' dropped; spaces to '-'; a
     repeated heading gets -1, -2, ...);
  2. every command line in a fenced block that starts with scripts/..., ringwayctl or ringway
     (any path to them: build/app/ringwayctl/ringwayctl) names only options that exist:
       scripts/X.sh   every --option in the script's usage (its leading comment block, or the
                      usage string it prints); sandbox.sh's subcommand one of its own;
                      bench.sh's sections one of its SECTIONS
       ringway*       every --option in the binary's own --help (TOOL=PATH arguments; a tool
                      not given, as in a build without DPDK, is skipped and said so)
       ringwayctl     the command word in its --help's generated command list (CTL_FOREACH_CMD)
                      or its etcd commands, and options in that command's usage line;
  3. every counter, drop reason, gauge and per-node field of the X-macro lists appears in
     docs/operations.md (its "What each counter means" tables);
  4. every diagram docs/img/NAME.dot has its NAME.png (scripts/docs-pictures.sh).
Prints one line per fault and fails when there is any."""
import os
import re
import subprocess
import sys

root = sys.argv[1]
# Pages that other branches of this round add (install.md: the package; fleet-scale.md:
# 1,000-node fleets). Until they are merged a link to one is a note, not a fault; once they
# exist they are checked as every page is. Empty this set after the merge.
PENDING = set()
tools = dict(a.split('=', 1) for a in sys.argv[2:])
faults = []
notes = []


def fault(where, what):
    faults.append(f'{where}: {what}')


def doc_files():
    out = [os.path.join(root, 'README.md')]
    d = os.path.join(root, 'docs')
    out += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.md'))
    return out


def rel(path):
    return os.path.relpath(path, root)


# --- 1. links and anchors --------------------------------------------------------------------

def slug(heading):
    h = heading.strip().lower()
    h = re.sub(r'[^\w\- ]', '', h)     # \w: letters, digits, '_' (GitHub keeps those)
    return h.replace(' ', '-')


def strip_code(text):
    """Text with fenced blocks and inline code spans blanked (links there are examples)."""
    out, fence = [], False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fence = not fence
            out.append('')
            continue
        out.append('' if fence else re.sub(r'`[^`]*`', '', line))
    return out


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        seen, found = {}, set()
        for line in strip_code_headings(open(path, encoding='utf-8').read()):
            m = re.match(r'^#{1,6} (.*?)\s*#*\s*$', line)
            if not m:
                continue
            title = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', m.group(1))   # link text only
            title = title.replace('`', '')
            s = slug(title)
            n = seen.get(s, 0)
            found.add(s if n == 0 else f'{s}-{n}')
            seen[s] = n + 1
        anchor_cache[path] = found
    return anchor_cache[path]


def strip_code_headings(text):
    out, fence = [], False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fence = not fence
            continue
        if not fence:
            out.append(line)
    return out


LINK = re.compile(r'!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')

links_checked = 0
for f in doc_files():
    # the whole page at once (code blanked, line breaks kept): link text may span lines
    page = '\n'.join(strip_code(open(f, encoding='utf-8').read()))
    for m in LINK.finditer(page):
        no = page.count('\n', 0, m.start(1)) + 1
        target = m.group(1)
        links_checked += 1
        if re.match(r'^[a-z][a-z0-9+.-]*:', target):      # http:, https:, mailto:
            continue
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(dest) and rel(dest) in PENDING:
            notes.append(f'{rel(f)}:{no}: {target}: a page another branch adds')
            continue
        if not os.path.exists(dest):
            fault(f'{rel(f)}:{no}', f'link to {target}: {rel(dest)} does not exist')
            continue
        if anchor:
            if not dest.endswith('.md') or os.path.isdir(dest):
                fault(f'{rel(f)}:{no}', f'anchor #{anchor} on {path}, not a page')
            elif anchor not in anchors(dest):
                fault(f'{rel(f)}:{no}', f'link to {target}: no heading of {rel(dest)} '
                      f'has the anchor #{anchor}')


# --- 2. commands -------------------------------------------------------------------------------

def run_help(tool, args):
    try:
        p = subprocess.run([tools[tool]] + args, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        fault(tool, f'cannot run {tools[tool]} {" ".join(args)}: {e}')
        return ''
    return p.stdout + p.stderr


def long_opts(text):
    return set(re.findall(r'(?<![\w-])--[a-z0-9][a-z0-9-]*', text))


help_cache = {}


def tool_help(tool):
    if tool not in help_cache:
        args = ['--', '--help'] if tool == 'ringway-loadgen' else ['--help']
        help_cache[tool] = run_help(tool, args) if tool in tools else None
    return help_cache[tool]


def script_usage(name):
    """A script's usage: its leading comment block plus every usage/die string in it."""
    path = os.path.join(root, 'scripts', name)
    if not os.path.exists(path):
        return None
    text = open(path, encoding='utf-8').read()
    head = []
    for line in text.split('\n')[1:]:
        if not line.startswith('#'):
            break
        head.append(line)
    usage = re.findall(r'usage[^\n]*', text, re.I)
    return '\n'.join(head + usage), text


def ctl_commands():
    """ringwayctl's command words, from the generated list its --help prints."""
    text = tool_help('ringwayctl')
    if text is None:
        return None
    words, usage, in_list = {}, {}, False
    for line in text.split('\n'):
        if line.startswith('commands:'):
            in_list = True
            continue
        if in_list:
            if not line.startswith('  '):
                in_list = False
                continue
            w = line.split()[0]
            words[w] = line
    # the forms of the usage lines: `ringwayctl [OPTIONS] top [-b] ...`, `-`, `replace`
    for line in text.split('\n'):
        m = re.search(r'ringwayctl \[OPTIONS\] (\S+)(.*)', line)
        if m:
            words.setdefault(m.group(1), m.group(1) + m.group(2))
            if m.group(1) in words:
                words[m.group(1)] += ' ' + m.group(2)
    etcd_src = os.path.join(root, 'app', 'ringwayctl', 'etcd.c')
    etcd = set(re.findall(r'strcmp\(argv\[0\], "([a-z-]+)"\)', open(etcd_src).read())) \
        if os.path.exists(etcd_src) else set()
    return words, etcd, text


def shell_lines(text):
    """(line number, command) for each command line of the fenced blocks, continuation lines
    joined, the shell prompt and trailing comments dropped."""
    out, fence, lang, buf, start, last = [], False, '', '', 0, -1
    for no, line in enumerate(text.split('\n'), 1):
        s = line.strip()
        if s.startswith('```'):
            fence = not fence
            lang = s[3:].strip()
            continue
        if not fence or lang not in ('', 'sh', 'bash', 'console', 'shell'):
            continue
        # an indented line right after a command continues it (a usage synopsis over lines)
        if not buf and line[:1].isspace() and out and last == no - 1 and s:
            cmd = re.sub(r'(^|\s)#.*$', '', s).strip()
            out[-1] = (out[-1][0], out[-1][1] + ' ' + cmd)
            last = no
            continue
        if not buf:
            start = no
        if s.startswith('$ '):
            s = s[2:]
        cont = s.endswith('\\')
        buf += ' ' + (s[:-1] if cont else s)
        if not cont:
            cmd = re.sub(r'(^|\s)#.*$', '', buf).strip()
            if cmd:
                out.append((start, cmd))
                last = no
            buf = ''
    return out


def check_opts(where, tool, opts, known, source):
    for o in opts:
        if o not in known:
            fault(where, f'{tool}: option {o} is not in {source}')


def check_script(where, name, argv):
    u = script_usage(name)
    if u is None:
        fault(where, f'scripts/{name} does not exist')
        return
    usage, text = u
    if name == 'sandbox.sh':
        subs = re.search(r'usage: \$prog ([a-z|-]+)', text)
        subs = set(subs.group(1).split('|')) if subs else set()
        if argv and argv[0] not in subs:
            fault(where, f'sandbox.sh: no subcommand {argv[0]} (it has {", ".join(sorted(subs))})')
        # exec ROLE CMD...: what follows the role is another program's command line
        if argv and argv[0] == 'exec':
            rest, i = argv[1:], 0
            while i < len(rest) and rest[i].startswith('--'):
                i += 2
            argv = argv[:1] + rest[:i]
        if '--' in argv:                       # router-start ... -- EXTRA-EAL-ARGS
            argv = argv[:argv.index('--')]
    if name == 'bench.sh':
        m = re.search(r'^SECTIONS=\(([^)]*)\)', text, re.M)
        sections = set(m.group(1).split()) if m else set()
        for a in argv:
            if not a.startswith('-') and a not in sections:
                fault(where, f'bench.sh: no section {a} (it has {", ".join(sorted(sections))})')
    check_opts(where, f'scripts/{name}', long_opts(' '.join(argv)), long_opts(usage),
               'its usage')


def check_ctl(where, argv, ctl):
    if ctl is None:
        notes.append(f'{where}: ringwayctl not built, not checked')
        return
    words, etcd, text = ctl
    glob = {'--socket', '--tcp', '--token-file', '--json', '--timeout', '--etcd', '--cluster'}
    glob &= long_opts(text)
    i, is_etcd = 0, False
    while i < len(argv) and argv[i].startswith('--'):
        o = argv[i]
        if o not in glob:
            fault(where, f'ringwayctl: option {o} is not in its --help')
        is_etcd |= o == '--etcd'
        i += 1 if o == '--json' else 2
    if i >= len(argv):
        return
    cmd, rest = argv[i], argv[i + 1:]
    if cmd.startswith(('[', '(')) or cmd in ('[OPTIONS]', 'COMMAND'):
        # a synopsis (`ringwayctl [--socket PATH | ...] COMMAND`): its options, wherever they are
        check_opts(where, 'ringwayctl', long_opts(' '.join(argv)), long_opts(text), 'its --help')
        return
    if '|' in cmd:                          # `remove|weight|replace ...`: each of them
        for c in cmd.split('|'):
            check_ctl(where, argv[:i] + [c] + rest, ctl)
        return
    if cmd in ('if-epoch',) and len(rest) >= 2:
        cmd, rest = rest[1], rest[2:]
    elif cmd == 'plan' and rest:
        cmd, rest = rest[0], rest[1:]
    known = set(words) | ({'-'}) | (etcd if is_etcd else set())
    if is_etcd:
        known |= {'plan'}
    if cmd not in known and not re.fullmatch(r'[A-Z][A-Z_|]*', cmd):
        fault(where, f'ringwayctl: no command {cmd} (its --help lists '
              f'{", ".join(sorted(words))}{"; etcd: " + ", ".join(sorted(etcd)) if is_etcd else ""})')
        return
    usage = words.get(cmd, '')
    for o in sorted(long_opts(' '.join(rest))):
        if o not in long_opts(usage) and o not in glob:
            fault(where, f'ringwayctl {cmd}: option {o} is not in its usage ({usage.strip()})')
    if cmd == 'top':
        shorts = set(re.findall(r'\[(-[a-z])', usage))
        for o in rest:
            if re.fullmatch(r'-[a-z]', o) and o not in shorts:
                fault(where, f'ringwayctl top: option {o} is not in its usage')


def unwrap(p):
    """The command under its wrappers: VAR=value, sudo, env, ip netns exec NS."""
    while p:
        if re.fullmatch(r'[A-Z_][A-Z0-9_]*=\S*', p[0]) or p[0] in ('sudo', 'env'):
            p = p[1:]
        elif p[:3] == ['ip', 'netns', 'exec'] and len(p) > 3:
            p = p[4:]
        else:
            break
    return p


BINARIES = ('ringway', 'ringwayctl', 'ringway-plan', 'ringway-sync', 'ringway-loadgen')


def check_command(where, cmd, ctl):
    try:
        argv = cmd.split()
    except ValueError:
        return
    # a pipeline or list: check each part that is one of ours
    parts, cur = [], []
    for i, a in enumerate(argv):
        # a pipe or list, not the '|' between a synopsis' alternatives (`(--add N | --remove N)`)
        nxt = argv[i + 1] if i + 1 < len(argv) else ''
        if a in ('|', '&&', '||', ';') and re.match(r'[a-z./]', nxt):
            parts.append(cur)
            cur = []
        else:
            cur.append(a)
    parts.append(cur)
    for p in parts:
        p = unwrap(p)
        if not p:
            continue
        prog = p[0]
        base = os.path.basename(prog)
        if prog.startswith('scripts/') and base.endswith('.sh'):
            check_script(where, base, p[1:])
        elif base == 'ringwayctl':
            check_ctl(where, p[1:], ctl)
        elif base in BINARIES:
            h = tool_help(base)
            if h is None:
                notes.append(f'{where}: {base} not built, not checked')
                continue
            args = p[1:]
            if base in ('ringway', 'ringway-loadgen'):    # before '--': EAL's options
                args = args[args.index('--') + 1:] if '--' in args else []
            if base == 'ringway-plan' and args and args[0] not in ('compare', 'assign'):
                fault(where, f'ringway-plan: no command {args[0]} (compare, assign)')
            check_opts(where, base, long_opts(' '.join(args)), long_opts(h), 'its --help')


checked = []


def command_lines():
    ctl = ctl_commands()
    for f in doc_files():
        for no, cmd in shell_lines(open(f, encoding='utf-8').read()):
            argv = unwrap(cmd.split())
            first = argv[0] if argv else ''
            base = os.path.basename(first)
            if first.startswith('scripts/') or base.startswith('ringway'):
                checked.append(f'{rel(f)}:{no}')
                check_command(f'{rel(f)}:{no}', cmd, ctl)


command_lines()


# --- 3. counters documented ----------------------------------------------------------------------

def macro_names(path, name):
    text = open(os.path.join(root, path), encoding='utf-8').read()
    m = re.search(r'^#define ' + name + r'\(_\)((?:.*\\\n)*.*)$', text, re.M)
    if not m:
        fault(path, f'no {name} list')
        return []
    body = re.sub(r'/\*.*?\*/', '', m.group(1), flags=re.S)
    return re.findall(r'_\([^()]*?"([^"]+)"\s*\)', body)


ops = os.path.join(root, 'docs', 'operations.md')
ops_text = open(ops, encoding='utf-8').read() if os.path.exists(ops) else ''
lists = [('lib/dataplane/dataplane.h', 'DP_FOREACH_COUNTER'),
         ('lib/dataplane/dataplane.h', 'DP_FOREACH_DROP'),
         ('lib/dataplane/dataplane.h', 'DP_FOREACH_GAUGE'),
         ('lib/dataplane/dataplane.h', 'DP_FOREACH_NODE_FIELD'),
         ('lib/control/control_priv.h', 'CTL_FOREACH_COUNTER'),
         ('lib/steer/steer_abi.h', 'STEER_FOREACH_CTR')]
for path, name in lists:
    if not os.path.exists(os.path.join(root, path)):
        continue
    for n in macro_names(path, name):
        if f'| `{n}` |' not in ops_text:
            fault('docs/operations.md', f'{name} row "{n}" ({path}) has no row in '
                  f'"What each counter means": add | `{n}` | its meaning |')

# --- 4. every diagram's source has its rendering (scripts/docs-pictures.sh) -------------------
img = os.path.join(root, 'docs', 'img')
if os.path.isdir(img):
    for f in sorted(os.listdir(img)):
        if f.endswith('.dot') and not os.path.exists(os.path.join(img, f[:-4] + '.png')):
            fault(f'docs/img/{f}', f'no {f[:-4]}.png beside it: run scripts/docs-pictures.sh')

for n in notes:
    print('note:', n)
for f in faults:
    print(f)
print(f'{len(faults)} fault(s) in {len(doc_files())} pages ({links_checked} links, '
      f'{len(checked)} command lines checked)')
sys.exit(1 if faults else 0)
