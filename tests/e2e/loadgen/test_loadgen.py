#!/usr/bin/env python3
"""ringway-loadgen against a real memcached, directly, over a veth pair.

The test makes two network namespaces of its own (addresses in 198.18.0.0/15 only), starts
`memcached -U 11211` in one and runs the load generator on a net_af_packet port over the
veth end in the other. It checks the load generator's report against memcached's own
counters (stats over TCP), so the figures cannot be the tool's own invention:

  - bad options: clear message, exit 2, before EAL starts
  - --preload then a GET/SET mix (ASCII): every request answered (or counted lost, few),
    hit ratio 1.0, memcached's curr_items == keys, cmd_get/cmd_set deltas == what was sent,
    JSON complete and consistent, rate as asked
  - meta and binary with 1400-byte values: two-datagram replies counted whole
  - misses: GETs for keys never stored are all misses, as memcached counts them
  - ARP: with --dst-mac and the server's neighbour table flushed, memcached's kernel must
    learn our MAC from our ARP reply
  - nothing listening: zero replies, every request lost, exit 3
  - --json FILE

With --smoke (the bench suite's smoke run) only one short mixed run is made.
Binary from env RINGWAY_LOADGEN. Exit: 0 pass, 1 fail, 77 skip (not root, no memcached).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
TAG = "lgt%d" % os.getpid()
NS_SRV = TAG + "-srv"
NS_CLI = TAG + "-cli"
SRV_IP = "198.18.6.1"
CLI_KERNEL_IP = "198.18.6.2"
LG_IP = "198.18.6.20"  # owned by the load generator (no kernel has it)
PORT = 11211
made = []
tmpdir = tempfile.mkdtemp(prefix="lgt-")
runs = 0


def log(*a):
    print(*a, flush=True)


class Checker:
    def __init__(self):
        self.fail = []
        self.passes = 0

    def ok(self, cond, what):
        if cond:
            self.passes += 1
            log("ok   - " + what)
        else:
            self.fail.append(what)
            log("FAIL - " + what)
        return cond


def sh(*cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def teardown(*_):
    pid_file = os.path.join(tmpdir, "mc.pid")
    try:
        with open(pid_file) as f:
            os.kill(int(f.read().strip()), signal.SIGTERM)
    except (OSError, ValueError):
        pass
    for ns in reversed(made):
        sh("ip", "netns", "del", ns, check=False)
    made.clear()
    shutil.rmtree(tmpdir, ignore_errors=True)
    # Each load generator run's DPDK runtime folder (--file-prefix TAG-N).
    for n in range(1, runs + 1):
        shutil.rmtree("/var/run/dpdk/%s-%d" % (TAG, n), ignore_errors=True)


def on_signal(signum, _frame):
    teardown()
    sys.exit(128 + signum)


def setup():
    for ns in (NS_SRV, NS_CLI):
        sh("ip", "netns", "add", ns)
        made.append(ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
    sh("ip", "-n", NS_SRV, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1",
       "netns", NS_CLI)
    for ns, dev, ip in ((NS_SRV, "veth0", SRV_IP), (NS_CLI, "veth1", CLI_KERNEL_IP)):
        sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
        # Full checksums in software: af_packet sees frames as the kernel left them.
        sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off", check=False)
        sh("ip", "-n", ns, "link", "set", dev, "up")
    sh("ip", "netns", "exec", NS_SRV, "memcached", "-d", "-U", str(PORT), "-p", str(PORT),
       "-l", SRV_IP, "-u", "root", "-t", "1", "-m", "64", "-P", os.path.join(tmpdir, "mc.pid"))
    for _ in range(50):
        try:
            stats()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("memcached does not answer over TCP")


def stats():
    """memcached's `stats` over TCP from the client namespace (via nsenter-less netns exec)."""
    out = sh("ip", "netns", "exec", NS_CLI, sys.executable, "-c",
             "import socket,sys\n"
             "s=socket.create_connection((%r,%d),timeout=3)\n"
             "s.sendall(b'stats\\r\\n'); b=b''\n"
             "while not b.endswith(b'END\\r\\n'):\n"
             "  d=s.recv(65536)\n"
             "  if not d: break\n"
             "  b+=d\n"
             "sys.stdout.write(b.decode())\n" % (SRV_IP, PORT), check=False)
    if out.returncode != 0 or "END" not in out.stdout:
        raise OSError("stats failed: " + out.stderr.strip())
    st = {}
    for line in out.stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[0] == "STAT":
            st[p[1]] = p[2]
    return st


def srv_mac():
    with open("/dev/null") as _:
        pass
    out = sh("ip", "-n", NS_SRV, "-j", "link", "show", "veth0").stdout
    return json.loads(out)[0]["address"]


def loadgen(args, json_file=None):
    """Run the load generator in the client namespace; returns (rc, report or None, stderr)."""
    global runs
    runs += 1
    cmd = ["ip", "netns", "exec", NS_CLI, LOADGEN, "--no-huge", "-m", "256", "--no-pci",
           "--no-shconf", "--log-level", "error", "--file-prefix", "%s-%d" % (TAG, runs),
           "--vdev", "net_af_packet0,iface=veth1,framecnt=4096", "--",
           "--src", LG_IP, "--dst", "%s:%d" % (SRV_IP, PORT)] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    text = p.stdout
    if json_file:
        try:
            with open(json_file) as f:
                text = f.read()
        except OSError:
            text = ""
    try:
        rep = json.loads(text)
    except ValueError:
        rep = None
    if p.returncode not in (0, 3) or rep is None:
        log("loadgen %s -> rc %d\nstdout: %s\nstderr: %s" % (" ".join(args), p.returncode,
                                                               p.stdout[-2000:],
                                                               p.stderr[-2000:]))
    return p.returncode, rep, p.stderr


PHASE_FIELDS = ("elapsed_s", "sent", "sent_get", "sent_set", "replies", "lost", "hits",
                "misses", "stored", "not_stored", "errors", "value_size_mismatch",
                "rx_packets", "rx_datagrams", "rx_late", "rx_duplicate", "rx_bad_reply",
                "rx_stray", "rx_other", "arp_replies_sent", "tx_retries", "alloc_failed",
                "window_full", "tx_pps", "reply_pps", "loss_ratio", "hit_ratio", "latency_us")
LAT_FIELDS = ("count", "min", "mean", "p50", "p90", "p99", "p99.9", "max")


def check_phase(c, name, ph, max_loss=0.01):
    """Fields present and consistent: every sent request is answered or lost."""
    missing = [f for f in PHASE_FIELDS if f not in ph]
    c.ok(not missing, "%s: all fields present %s" % (name, missing or ""))
    if missing:
        return False
    lat = ph["latency_us"]
    c.ok(all(f in lat for f in LAT_FIELDS), "%s: all latency fields present" % name)
    c.ok(ph["sent"] == ph["sent_get"] + ph["sent_set"], "%s: sent = gets + sets" % name)
    c.ok(ph["replies"] + ph["lost"] == ph["sent"],
         "%s: replies %d + lost %d == sent %d" % (name, ph["replies"], ph["lost"], ph["sent"]))
    c.ok(ph["lost"] <= max_loss * ph["sent"],
         "%s: losses %d within %.1f%% of %d" % (name, ph["lost"], 100 * max_loss, ph["sent"]))
    c.ok(ph["hits"] + ph["misses"] + ph["stored"] + ph["not_stored"] + ph["errors"] ==
         ph["replies"], "%s: every reply classified" % name)
    c.ok(ph["errors"] == 0 and ph["rx_bad_reply"] == 0,
         "%s: no error replies (%d), no unparsable replies (%d)" %
         (name, ph["errors"], ph["rx_bad_reply"]))
    c.ok(lat["count"] == ph["replies"], "%s: one latency sample per reply" % name)
    if ph["replies"] > 0:
        c.ok(0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99.9"] <=
             lat["max"], "%s: latency percentiles ordered (%s)" % (name, lat))
    return True


def delta(before, after, key):
    return int(after[key]) - int(before[key])


def test_bad_options(c):
    cases = [["--dst", "1.2.3.4", "--src", "1.2.3.5"],                      # no MAC source
             ["--dst", "1.2.3.4", "--src", "1.2.3.5", "--arp", "--rate", "fast"],
             ["--dst", "1.2.3.4:99999", "--src", "1.2.3.5", "--arp"],
             ["--dst", "1.2.3.4", "--src", "1.2.3.5", "--arp", "--dist", "zipf"],
             ["--dst", "1.2.3.4", "--src", "1.2.3.5", "--arp", "--proto", "text"],
             ["--dst", "1.2.3.4", "--src", "1.2.3.5", "--arp", "--get-ratio", "1.5"],
             ["--dst", "1.2.3.4", "--src", "1.2.3.5", "--arp", "--frobnicate"],
             ["--src", "1.2.3.5", "--arp"]]
    for args in cases:
        p = subprocess.run([LOADGEN, "--"] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=10)
        c.ok(p.returncode == 2 and p.stderr.startswith("ringway-loadgen: ") and
             "EAL" not in p.stderr,
             "bad options %s: exit 2 with a message (%d: %s)" %
             (" ".join(args), p.returncode, p.stderr.strip().splitlines()[0]
              if p.stderr.strip() else ""))
    p = subprocess.run([LOADGEN, "--help"], stdout=subprocess.PIPE, text=True, timeout=10)
    c.ok(p.returncode == 0 and "--preload" in p.stdout and "--dist" in p.stdout,
         "--help documents the options")


def check_series(c, run, duration):
    """run.series: the hit ratio per 100 ms of send time adds up to the run's counters."""
    ser = run.get("series")
    if not c.ok(ser is not None, "run.series present"):
        return
    n = ser["buckets"]
    c.ok(abs(ser["interval_ms"] - 100) < 0.5 and abs(n - duration * 10) <= 2 and
         all(len(ser[k]) == n for k in ("hits", "misses", "lost", "hit_ratio")),
         "series: %d buckets of %.1f ms over a %d s run" % (n, ser["interval_ms"], duration))
    c.ok((sum(ser["hits"]), sum(ser["misses"]), sum(ser["lost"])) ==
         (run["hits"], run["misses"], run["lost"]),
         "series sums = run hits %d, misses %d, lost %d" % (run["hits"], run["misses"],
                                                           run["lost"]))
    ratios = [r for r in ser["hit_ratio"] if r is not None]
    c.ok(ratios and min(ratios) == ser["min_hit_ratio"] and
         abs(ser["start_unix"] - time.time()) < 120,
         "series: min_hit_ratio %s is the lowest bucket; start_unix is now-ish"
         % ser["min_hit_ratio"])


def test_mixed_preload(c, duration, rate, keys):
    before = stats()
    jf = os.path.join(tmpdir, "mixed.json")
    rc, rep, err = loadgen(["--arp", "--rate", str(rate), "--duration", str(duration),
                            "--keys", str(keys), "--get-ratio", "0.9", "--preload",
                            "--key-prefix", "mix:", "--json", jf, "--seed", "7"],
                           json_file=jf)
    after = stats()
    c.ok(rc == 0, "mixed run exits 0 (rc %d)" % rc)
    if not c.ok(rep is not None, "--json FILE holds well-formed JSON"):
        return
    c.ok("progress" not in err and "loadgen run" in err, "progress lines on stderr")
    c.ok(rep["config"]["mac_by_arp"] and rep["config"]["dst_mac"] == srv_mac(),
         "ARP resolved memcached's MAC (%s)" % rep["config"]["dst_mac"])
    pre, run = rep.get("preload"), rep.get("run")
    if not c.ok(pre is not None and run is not None, "report has preload and run phases"):
        return
    check_phase(c, "preload", pre)
    c.ok(rep.get("preload_keys_missing") == 0 and pre["stored"] == keys,
         "preload stored every key (%d of %d)" % (pre["stored"], keys))
    c.ok(int(after["curr_items"]) >= keys, "memcached holds the %d keys (curr_items %s)" %
         (keys, after["curr_items"]))
    check_phase(c, "run", run)
    c.ok(run["hit_ratio"] is not None and run["hit_ratio"] == 1.0,
         "hit ratio 1.0 after --preload (%s)" % run["hit_ratio"])
    check_series(c, run, duration)
    c.ok(" min " in err, "progress lines show the lowest 100-ms hit ratio")
    want = rate * duration
    c.ok(abs(run["sent"] - want) <= 0.05 * want,
         "sent %d ~ rate x duration %d" % (run["sent"], want))
    c.ok(0.3 < run["sent_get"] / max(run["sent"], 1) and
         abs(run["sent_get"] / max(run["sent"], 1) - 0.9) < 0.03,
         "GET share ~0.9 (%d of %d)" % (run["sent_get"], run["sent"]))
    # memcached's own counters: what it received is what we sent (minus what the path lost).
    sets = pre["sent"] + run["sent_set"]
    got_sets, got_gets = delta(before, after, "cmd_set"), delta(before, after, "cmd_get")
    c.ok(pre["stored"] + run["stored"] <= got_sets <= sets,
         "memcached cmd_set delta %d between our stored %d and sent %d" %
         (got_sets, pre["stored"] + run["stored"], sets))
    c.ok(run["hits"] <= got_gets <= run["sent_get"],
         "memcached cmd_get delta %d between our hits %d and sent GETs %d" %
         (got_gets, run["hits"], run["sent_get"]))
    c.ok(delta(before, after, "get_hits") >= run["hits"],
         "memcached get_hits delta %d >= our hits %d" %
         (delta(before, after, "get_hits"), run["hits"]))


def test_protocol_large(c, proto):
    rc, rep, _ = loadgen(["--arp", "--rate", "2000", "--duration", "1.5", "--keys", "200",
                          "--value-size", "1400", "--proto", proto, "--preload",
                          "--key-prefix", proto + ":", "--get-ratio", "0.8"])
    if not c.ok(rc == 0 and rep is not None, "%s 1400-byte values: run ok" % proto):
        return
    run = rep["run"]
    check_phase(c, proto + " run", run)
    c.ok(run["hit_ratio"] == 1.0 and run["value_size_mismatch"] == 0,
         "%s: every GET hit a 1400-byte value" % proto)
    # A 1400-byte value does not fit one 1400-byte datagram with its header: 2 per hit.
    whole = 2 * run["hits"] + run["stored"]
    c.ok(run["rx_datagrams"] >= whole and (run["lost"] > 0 or run["rx_datagrams"] == whole),
         "%s: replies to GETs counted whole over 2 datagrams (%d datagrams, %d hits, %d sets)"
         % (proto, run["rx_datagrams"], run["hits"], run["stored"]))


def test_misses(c):
    before = stats()
    rc, rep, _ = loadgen(["--arp", "--rate", "2000", "--duration", "1", "--keys", "100000",
                          "--get-ratio", "1", "--key-prefix", "never-stored:", "--proto",
                          "meta", "--dist", "zipf:0.9"])
    after = stats()
    if not c.ok(rc == 0 and rep is not None, "misses: run ok"):
        return
    run = rep["run"]
    check_phase(c, "misses run", run)
    c.ok(run["hits"] == 0 and run["misses"] == run["replies"] and run["hit_ratio"] == 0.0,
         "GETs of never-stored keys are all misses (%d)" % run["misses"])
    c.ok(run["misses"] <= delta(before, after, "get_misses") <= run["sent_get"],
         "memcached counted the misses (%d)" % delta(before, after, "get_misses"))


def test_arp_answered(c):
    sh("ip", "-n", NS_SRV, "neigh", "flush", "all")
    rc, rep, _ = loadgen(["--dst-mac", srv_mac(), "--rate", "1000", "--duration", "1",
                          "--keys", "10", "--get-ratio", "1"])
    if not c.ok(rc == 0 and rep is not None, "--dst-mac run ok"):
        return
    run = rep["run"]
    c.ok(run["arp_replies_sent"] >= 1 and run["replies"] > 0,
         "memcached's kernel learned our MAC from our ARP reply (%d sent, %d replies)" %
         (run["arp_replies_sent"], run["replies"]))
    neigh = sh("ip", "-n", NS_SRV, "neigh", "show", LG_IP).stdout
    c.ok("lladdr" in neigh, "server neighbour entry for %s: %s" % (LG_IP, neigh.strip()))


def test_nothing_listening(c):
    global PORT
    saved, PORT = PORT, 11299
    try:
        rc, rep, err = loadgen(["--arp", "--rate", "500", "--duration", "0.5",
                                "--timeout-ms", "200"])
    finally:
        PORT = saved
    c.ok(rc == 3 and "no reply" in err, "no server: exit 3 and says so (rc %d)" % rc)
    if rep is not None:
        run = rep["run"]
        c.ok(run["replies"] == 0 and run["lost"] == run["sent"] > 0,
             "no server: every request lost (%d of %d)" % (run["lost"], run["sent"]))


def main():
    global LOADGEN
    smoke = "--smoke" in sys.argv
    LOADGEN = os.environ.get("RINGWAY_LOADGEN", "")
    if not os.access(LOADGEN, os.X_OK):
        log("FAIL: RINGWAY_LOADGEN not set to the built binary (%r)" % LOADGEN)
        return 1
    if os.geteuid() != 0:
        log("SKIP: needs root (network namespaces)")
        return SKIP
    if shutil.which("memcached") is None:
        log("SKIP: memcached not installed")
        return SKIP
    c = Checker()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        setup()
        if smoke:
            test_mixed_preload(c, duration=2, rate=2000, keys=1000)
        else:
            test_bad_options(c)
            test_mixed_preload(c, duration=3, rate=5000, keys=5000)
            test_protocol_large(c, "meta")
            test_protocol_large(c, "binary")
            test_protocol_large(c, "ascii")
            test_misses(c)
            test_arp_answered(c)
            test_nothing_listening(c)
    finally:
        teardown()
    log("loadgen: %d passed, %d failed" % (c.passes, len(c.fail)))
    for f in c.fail:
        log("  failed: " + f)
    return 0 if not c.fail and c.passes else 1


LOADGEN = ""
if __name__ == "__main__":
    sys.exit(main())
