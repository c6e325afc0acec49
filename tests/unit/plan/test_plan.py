#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ringway-plan end to end: what compare reports, that assign agrees with it, and the errors.

usage: test_plan.py RINGWAY_PLAN_BINARY     (TAP on stdout)
"""
import json
import os
import subprocess
import sys
import tempfile

PLAN = sys.argv[1]
ALGOS = ["ring", "ketama", "twemproxy", "jump", "rendezvous", "maglev", "modulo"]
# Exactly minimal: only keys of the changed member move. Maglev is nearly minimal (its table
# refill may move a few entries between other members); jump is minimal only for adding or
# removing the last member; modulo is the reference that moves almost everything.
MINIMAL = ["ring", "ketama", "twemproxy", "jump", "rendezvous"]
NEARLY = ["maglev"]
results = []


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))


def run(*args, code=0):
    p = subprocess.run([PLAN, *args], capture_output=True, text=True, timeout=300)
    if p.returncode != code:
        raise AssertionError("%s: exit %d (wanted %d): %s" % (" ".join(args), p.returncode, code,
                                                             p.stderr.strip()))
    return p


def compare_json(*args):
    return {a["algo"]: a for a in json.loads(run("compare", "--json", *args).stdout)["algorithms"]}


def assign(*args):
    out = {}
    for line in run("assign", *args).stdout.splitlines():
        key, node = line.split("\t")
        out[key] = node
    return out


def nodes_file(tmp, name, n, extra=""):
    """The fleet --nodes N describes, written out as a nodes file."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("# generated like --nodes %d\n" % n)
        for i in range(n):
            f.write("node%d 198.18.1.%d:11211 1\n" % (i, i + 1))
        f.write(extra)
    return path


def test_add_one(tmp):
    doc = json.loads(run("compare", "--json", "--generate", "20000", "--nodes", "10",
                         "--add", "node10").stdout)
    check(doc["keys"] == 20000 and doc["members_before"] == 10 and doc["members_after"] == 11,
          "compare reports keys and member counts", str(doc)[:200])
    check(doc["changes"][0]["addr"] == "198.18.1.11" and doc["changes"][0]["port"] == 11211,
          "--add without an address takes the next generated one", str(doc["changes"]))
    check(abs(doc["ideal_fraction"] - 1 / 11) < 1e-6, "ideal movement is 1/11")
    algos = {a["algo"]: a for a in doc["algorithms"]}
    check(sorted(algos) == sorted(ALGOS), "compare runs every algorithm by default",
          str(sorted(algos)))
    mod, ring = algos["modulo"], algos["ring"]
    check(0.90 <= mod["moved_fraction"] <= 0.91, "modulo moves 90-91%% of keys",
          str(mod["moved_fraction"]))
    check(0.08 <= ring["moved_fraction"] <= 0.11, "ring moves 8-11%% of keys",
          str(ring["moved_fraction"]))
    check(mod["moved_between_unchanged"] > 0.8 * mod["moved"],
          "modulo moves keys between untouched members", str(mod["moved_between_unchanged"]))
    for name in MINIMAL + NEARLY:
        a = algos[name]
        strays = sum(v for k, v in a["moved_to"].items() if k != "node10")
        limit = 0 if name in MINIMAL else doc["keys"] // 100
        check(a["moved"] > 0 and a["moved_between_unchanged"] == strays <= limit,
              "%s: every moved key goes to node10%s" % (
                  name, "" if limit == 0 else " (but at most 1%)"),
              "moved %d, to %s, between unchanged %d" % (a["moved"], a["moved_to"],
                                                          a["moved_between_unchanged"]))
        check(sum(a["moved_from"].values()) == a["moved"], "%s: moved_from adds up" % name)
        lb, la = a["load_before"], a["load_after"]
        check(lb["members"] == 10 and la["members"] == 11 and abs(lb["mean"] - 2000) < 1e-6
              and abs(la["mean"] - 20000 / 11) < 1e-3 and lb["min"] <= lb["mean"] <= lb["max"],
              "%s: load statistics are consistent" % name, "%s %s" % (lb, la))
    hs = ring["hash_space_fraction"]
    check(hs is not None and abs(hs - ring["moved_fraction"]) < 0.02,
          "ring: exact hash-space fraction agrees with the sample", "%s vs %s" % (
              hs, ring["moved_fraction"]))
    hs = algos["jump"]["hash_space_fraction"]
    check(hs is not None and abs(hs - 1 / 11) < 1e-6, "jump: hash-space fraction is 1/11",
          str(hs))
    return algos


def test_assign_agrees(tmp, algos):
    before_file = nodes_file(tmp, "ten", 10)
    after_file = nodes_file(tmp, "eleven", 11)
    for name in ALGOS:
        before = assign("--nodes", "10", "--algo", name, "--generate", "20000")
        same = assign("--nodes", before_file, "--algo", name, "--generate", "20000")
        after = assign("--nodes", after_file, "--algo", name, "--generate", "20000")
        check(len(before) == 20000 and before == same,
              "%s: --nodes 10 is the documented fleet (same assignment as its file)" % name)
        moved = [k for k in before if before[k] != after[k]]
        check(len(moved) == algos[name]["moved"],
              "%s: assign before/after differs on exactly compare's moved count" % name,
              "%d vs %d" % (len(moved), algos[name]["moved"]))
        if name in MINIMAL:
            check(all(after[k] == "node10" for k in moved),
                  "%s: assign moves keys only to node10" % name)


def test_remove_and_weight():
    algos = compare_json("--nodes", "10", "--remove", "node3", "--generate", "20000")
    for name in ["ring", "ketama", "twemproxy", "rendezvous", "maglev"]:
        a = algos[name]
        limit = 0 if name in MINIMAL else 200
        strays = sum(v for k, v in a["moved_from"].items() if k != "node3")
        check(a["moved_from"].get("node3", 0) > 1000 and "node3" not in a["moved_to"]
              and a["moved_between_unchanged"] == strays <= limit,
              "%s: remove moves node3's keys%s" % (name, " only" if limit == 0 else ""),
              str(a["moved_from"]))
    a = algos["jump"]
    check(a["moved_between_unchanged"] > 0, "jump: removing a middle member is not minimal",
          str(a["moved_from"]))
    algos = compare_json("--nodes", "10", "--weight", "node2=2", "--algo",
                         "ring,rendezvous,maglev", "--generate", "20000")
    check(sorted(algos) == ["maglev", "rendezvous", "ring"], "--algo selects algorithms")
    for name in ("ring", "rendezvous", "maglev"):
        a = algos[name]
        limit = 0 if name in MINIMAL else 200
        strays = sum(v for k, v in a["moved_to"].items() if k != "node2")
        check(a["moved_between_unchanged"] == strays <= limit
              and 0.05 < a["moved_fraction"] < 0.13,
              "%s: reweighting node2 moves keys only to node2" % name, str(a)[:300])


def test_keys_file_and_generated_addresses(tmp):
    path = os.path.join(tmp, "keys")
    with open(path, "w") as f:
        f.write("alpha\r\n\nbeta\n{tag}gamma\nuser:7")
    got = run("assign", "--nodes", "5", "--algo", "ring", "--keys", path).stdout.splitlines()
    check([l.split("\t")[0] for l in got] == ["alpha", "beta", "{tag}gamma", "user:7"],
          "keys file: one key a line, CR and blank lines dropped", str(got))
    gen = assign("--nodes", "5", "--algo", "ring", "--generate", "8")
    check(gen["user:7"] == got[3].split("\t")[1], "a key places the same from file or --generate")
    doc = json.loads(run("compare", "--json", "--nodes", "300", "--add", "x", "--algo", "ring",
                         "--generate", "1000").stdout)
    check(doc["changes"][0]["addr"] == "198.18.2.47", "node 300 is at 198.18.2.47",
          str(doc["changes"]))
    doc = json.loads(run("compare", "--json", "--nodes", "3", "--add", "big=10.0.0.9:11300",
                         "--weight", "big=3", "--algo", "ring", "--generate", "3000").stdout)
    a = doc["algorithms"][0]
    check(doc["changes"][0]["addr"] == "10.0.0.9" and doc["changes"][0]["port"] == 11300
          and a["moved_to"] == {"big": a["moved"]} and 0.4 < a["moved_fraction"] < 0.6,
          "--add NAME=ADDR:PORT then --weight: a weight-3 member takes half", str(a)[:300])


def test_settings(tmp):
    path = os.path.join(tmp, "tagged")
    with open(path, "w") as f:
        f.write("".join("{acct%d}:item%d\n" % (i % 3, i) for i in range(300)))
    for algo in ALGOS:
        tagged = assign("--nodes", "20", "--algo", algo, "--keys", path, "--hash-tag", "{}")
        owners = {}
        for key, node in tagged.items():
            owners.setdefault(key.split(":")[0], set()).add(node)
        plain = assign("--nodes", "20", "--algo", algo, "--keys", path)
        check(all(len(v) == 1 for v in owners.values()) and len(set(plain.values())) > 3,
              "%s: --hash-tag {} places keys with the same tag together" % algo, str(owners))
    doc = json.loads(run("compare", "--json", "--nodes", "10", "--add", "n", "--vnodes", "10",
                         "--key-hash", "md5", "--maglev-size", "257", "--hash-tag", "{}",
                         "--algo", "ring,twemproxy,maglev", "--generate", "2000").stdout)
    a = {x["algo"]: x for x in doc["algorithms"]}
    check(a["ring"]["vnodes"] == 10 and a["ring"]["points_before"] == 100
          and a["ring"]["points_after"] == 110, "--vnodes sets ring tokens", str(a["ring"])[:200])
    check(a["twemproxy"]["key_hash"] == "md5" and a["maglev"]["maglev_size"] == 257
          and a["ring"]["hash_tag"] == "{}", "--key-hash, --maglev-size, --hash-tag are applied")
    md5 = assign("--nodes", "10", "--algo", "twemproxy", "--key-hash", "md5", "--generate", "500")
    fnv = assign("--nodes", "10", "--algo", "twemproxy", "--generate", "500")
    check(md5 != fnv, "twemproxy's key hash changes placement")
    p = run("compare", "--nodes", "10", "--add", "n", "--maglev-size", "256", "--algo", "maglev",
            code=1)
    check("maglev" in p.stderr, "a maglev table size that is not prime is refused",
          p.stderr.strip())
    p = run("compare", "--json", "--nodes", "300", "--add", "n", "--maglev-size", "257",
            "--generate", "1000")
    got = sorted(a["algo"] for a in json.loads(p.stdout)["algorithms"])
    check(got == sorted(set(ALGOS) - {"maglev"}) and "maglev left out" in p.stderr,
          "without --algo, an algorithm that cannot be built is left out, said on stderr",
          "%s %s" % (got, p.stderr.strip()))


def test_errors(tmp):
    bad = nodes_file(tmp, "bad", 2, "node9 198.18.1.10:70000\n")
    p = run("compare", "--nodes", bad, "--add", "x", code=1)
    check("line 4:" in p.stderr and "bad port" in p.stderr and bad in p.stderr,
          "a bad nodes file names file and line", p.stderr.strip())
    dup = nodes_file(tmp, "dup", 3, "node1 198.18.1.9\n")
    p = run("assign", "--nodes", dup, "--algo", "ring", code=1)
    check("line 5:" in p.stderr and "duplicate name 'node1'" in p.stderr,
          "a duplicate name names the line", p.stderr.strip())
    usage = [
        [],
        ["frobnicate"],
        ["compare", "--nodes", "10"],
        ["compare", "--nodes", "10", "--add", "node3"],
        ["compare", "--nodes", "10", "--remove", "node99"],
        ["compare", "--nodes", "10", "--weight", "node1"],
        ["compare", "--nodes", "10", "--weight", "node1=-2"],
        ["compare", "--nodes", "10", "--add", "bad name"],
        ["compare", "--nodes", "10", "--add", "n=1.2.3.4:0"],
        ["compare", "--nodes", "10", "--add", "n", "--algo", "ring,nope"],
        ["compare", "--nodes", "0", "--add", "n"],
        ["compare", "--nodes", "10", "--add", "n", "--generate", "0"],
        ["compare", "--nodes", "10", "--add", "n", "--generate", "5", "--keys", bad],
        ["compare", "--nodes", "10", "--add", "n", "--bogus"],
        ["assign", "--nodes", "10"],
        ["assign", "--nodes", "10", "--algo", "ring,jump"],
        ["assign", "--nodes", "10", "--algo", "ring", "--add", "x"],
        ["assign", "--nodes", "10", "--algo", "twemproxy", "--key-hash", "sha1"],
        ["assign", "--nodes", "10", "--algo", "ring", "extra"],
        ["assign", "--nodes", "10", "--algo", "ring", "--hash-tag", "{"],
        ["assign", "--nodes", "10", "--algo", "ring", "--vnodes", "0"],
    ]
    for args in usage:
        p = subprocess.run([PLAN, *args], capture_output=True, text=True)
        check(p.returncode == 2 and p.stderr.strip() and not p.stdout,
              "usage error exits 2 with a message: %s" % " ".join(args),
              "exit %d, stderr %r" % (p.returncode, p.stderr[:200]))
    p = run("assign", "--nodes", os.path.join(tmp, "missing"), "--algo", "ring", code=1)
    check("missing" in p.stderr, "a missing nodes file exits 1 naming it", p.stderr.strip())
    keys = os.path.join(tmp, "longkeys")
    with open(keys, "w") as f:
        f.write("ok\n" + "k" * 251 + "\n")
    p = run("assign", "--nodes", "3", "--algo", "ring", "--keys", keys, code=1)
    check("line 2:" in p.stderr, "a key over 250 bytes names its line", p.stderr.strip())


def test_ipv6(tmp):
    """IPv6 members: the same names at IPv6 addresses place every key as at IPv4 ones, except
    under ketama, whose libmemcached recipe hashes the address (its points are MD5 of
    "<host>-<i>"); --add takes [IPV6]:PORT and the text report prints it bracketed."""
    v4 = nodes_file(tmp, "v4", 10)
    v6 = os.path.join(tmp, "v6")
    with open(v6, "w") as f:
        for i in range(10):
            f.write("node%d [2001:2::1:%x]:11211 1\n" % (i, i + 1))
    for name in ALGOS:
        a = assign("--nodes", v4, "--algo", name, "--generate", "20000")
        b = assign("--nodes", v6, "--algo", name, "--generate", "20000")
        moved = sum(1 for k in a if a[k] != b[k])
        if name == "ketama":
            check(moved > 20000 // 2, "ketama: the same names at IPv6 addresses move keys "
                  "(libmemcached hashes the address)", "%d moved" % moved)
        else:
            check(len(a) == 20000 and moved == 0,
                  "%s: the same names at IPv6 addresses move no key" % name, "%d moved" % moved)
    doc = json.loads(run("compare", "--json", "--nodes", v6, "--add", "big=[2001:2::9]:11300",
                         "--algo", "ring", "--generate", "3000").stdout)
    c = doc["changes"][0]
    check(c["addr"] == "2001:2::9" and c["port"] == 11300,
          "--add NAME=[IPV6]:PORT: the address without brackets, the port", str(c))
    out = run("compare", "--nodes", v6, "--add", "big=[2001:0002::9]", "--algo", "ring",
              "--generate", "3000").stdout
    check("add big [2001:2::9]:11211 weight 1" in out,
          "the text report prints an IPv6 member [v6]:port", out[:300])
    p = subprocess.run([PLAN, "compare", "--nodes", "3", "--add", "n=2001:2::9"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "brackets" in p.stderr,
          "--add NAME=IPV6 without brackets is refused, saying so", p.stderr.strip())


def test_text_output():
    out = run("compare", "--nodes", "10", "--add", "node10", "--generate", "20000").stdout
    rows = {l.split()[0]: l.split() for l in out.splitlines() if l.split()
            and l.split()[0] in ALGOS}
    check(sorted(rows) == sorted(ALGOS) and "modulo: " in out and "not minimal" in out,
          "the table lists every algorithm and flags modulo", out[:400])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        steps = [lambda: test_assign_agrees(tmp, test_add_one(tmp)), test_remove_and_weight,
                 lambda: test_keys_file_and_generated_addresses(tmp), lambda: test_errors(tmp),
                 lambda: test_settings(tmp), lambda: test_ipv6(tmp),
                 test_text_output]
        for step in steps:
            try:
                step()
            except (AssertionError, ValueError, KeyError, subprocess.SubprocessError) as e:
                check(False, "step %s raised" % getattr(step, "__name__", "?"), repr(e))
    print("1..%d" % len(results))
    for i, (ok, what, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        if not ok and detail:
            for line in detail.splitlines():
                print("# " + line)
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
