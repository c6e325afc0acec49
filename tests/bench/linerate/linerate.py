#!/usr/bin/env python3
"""RFC 2544-style line-rate measurements of the real ringway binary over net_memif.

One ringway-loadgen process is the clients and every memcached node (--nodes: it answers for
1,000 node addresses like memcached would); ringway runs with a real config (1,000-node ring,
static node MACs) on a net_memif port; nothing but DPDK is on the path (both processes
--no-pci --no-huge, their own --file-prefix, the memif socket in a temporary directory).

For each worker count and case the load generator first measures itself alone (generator-only:
ringway-loadgen to a second one that only emulates the nodes, --serve, over net_memif, no router):
its capacity unpaced and its own zero-loss rate; the router's search then starts at that capacity,
and a case whose router figure is above half of it is marked generator-bound. Then the load
generator binary-searches the highest offered rate
whose trials lose at most --loss-max of their requests (--search), then measures latency at 10,
50 and 90% of it. Writes a JSON report (and a PNG chart with gnuplot) and prints a table.

  linerate.py --build DIR --out FILE [--png FILE] [--raw DIR] [--quick] [--workers 1,2]
              [--cases a,b] [--trial S] [--dataplane-json FILE] [--no-generator-only]
              [--fixed-top]

--quick: one worker, single-key ASCII GETs with short trials (the bench suite's smoke run);
exit 1 when the harness does not work (no reply, a wrong answer, the router's identity broken);
never on a figure.
"""
import argparse
import ipaddress
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROUTER_MAC = "02:00:c6:12:00:01"
NODE_MAC = "02:00:c6:12:10:02"
ROUTER_IP = "198.18.0.1"
CLIENT_IP = "198.18.0.20"
NODE_NET = "198.18.16.0/22"
NODES = 1000
WIRE_OVERHEAD = 24  # preamble 8 + FCS 4 + inter-frame gap 12 bytes per frame

# name -> (loadgen arguments, what it is). Multi-gets wait out the router's request timeout
# (1 s) between trials: after an overloaded trial its merge contexts stay taken until then,
# and the next trial's multi-gets would be refused (SERVER_ERROR) for the last one's load.
CASES = {
    "ascii_100": (["--proto", "ascii", "--get-ratio", "1", "--value-size", "100"],
                  "single-key ASCII get, 100-byte values"),
    "meta_100": (["--proto", "meta", "--get-ratio", "1", "--value-size", "100"],
                 "single-key meta mg, 100-byte values"),
    "binary_100": (["--proto", "binary", "--get-ratio", "1", "--value-size", "100"],
                   "single-key binary GET, 100-byte values"),
    "ascii_1400": (["--proto", "ascii", "--get-ratio", "1", "--value-size", "1400"],
                   "single-key ASCII get, 1,400-byte values (2-datagram replies)"),
    "meta_1400": (["--proto", "meta", "--get-ratio", "1", "--value-size", "1400"],
                  "single-key meta mg, 1,400-byte values"),
    "binary_1400": (["--proto", "binary", "--get-ratio", "1", "--value-size", "1400"],
                    "single-key binary GET, 1,400-byte values"),
    "mix_90_10": (["--proto", "ascii", "--get-ratio", "0.9", "--value-size", "100"],
                  "ASCII 90% get / 10% set, 100-byte values"),
    "multiget_10": (["--proto", "ascii", "--get-ratio", "1", "--value-size", "100",
                     "--multiget", "10", "--trial-gap-ms", "1100"],
                    "ASCII 10-key get (split over the nodes, merged), 100-byte values"),
}
# Two workers only: replies steered to the other worker's queue (its hand-off ring).
HANDOFF = {
    "handoff_0": (["--proto", "ascii", "--get-ratio", "1", "--value-size", "100",
                   "--node-cross", "0"], "ASCII get, every reply on its worker's queue"),
    "handoff_50": (["--proto", "ascii", "--get-ratio", "1", "--value-size", "100",
                    "--node-cross", "0.5"], "ASCII get, half the replies on the other queue"),
}


def write_config(path, tmp, workers):
    lines = [
        "[router]", "port = 0", "address = %s" % ROUTER_IP, "mac = %s" % ROUTER_MAC,
        "listen_ports = 11211", "reply_port_base = 32768", "reply_port_count = 16384",
        "allowed_clients = 198.18.0.0/24", "idle = poll", "mtu = 1500",
        "[placement]", "algorithm = ring", "vnodes = 160",
        "[tables]", "request_slots = 32768", "client_slots_max = 0", "mbufs = 65535",
        "multiget_inflight = 1024",
        "rx_desc = 1024", "tx_desc = 1024",
        "[control]", "socket = %s/ctl.sock" % tmp, "state_file = %s/state" % tmp,
        "[log]", "level = notice",
        # A zero-loss search overloads on purpose: the requests its trials lose time out, and
        # with the default health settings (3 in 1 s) they would mark the emulated nodes down
        # and send the next trials to stand-ins (failover), measuring the health machine
        # instead of forwarding. 1,000 timeouts of one node within 1 ms never happen here.
        "[health]", "fail_down = 1000", "window_ms = 1",
    ]
    base = int(ipaddress.IPv4Address(NODE_NET.split("/")[0])) + 1
    for i in range(NODES):
        lines += ["[node n%d]" % i, "address = %s:11211" % ipaddress.IPv4Address(base + i),
                  "mac = %s" % NODE_MAC]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[11]) + int(rest[12])
    except OSError:
        return 0


def allow_core():
    """In a child before exec: a core dump when it dies of a signal (the limit is this process's
    own; where the core goes is the host's kernel.core_pattern, by default its cwd)."""
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def core_backtrace(binary, cwd, pid, raw, tag):
    """The backtrace of every thread of a process that died of a signal, from its core in
    @p cwd (a file named core or core.<pid>), written to raw/<tag>.bt.txt; the core itself is
    removed (a --no-huge DPDK process dumps its whole memory). Returns what the record says:
    the file and the crashing thread's first frames, or why there is none."""
    cores = [f for f in (os.listdir(cwd) if os.path.isdir(cwd) else [])
             if f == "core" or f == "core.%d" % pid]
    if not cores:
        try:
            with open("/proc/sys/kernel/core_pattern") as f:
                pattern = f.read().strip()
        except OSError:
            pattern = "?"
        return {"backtrace": None, "why": "no core file in the process's directory "
                                          "(kernel.core_pattern %r)" % pattern}
    core = os.path.join(cwd, cores[0])
    try:
        if shutil.which("gdb") is None:
            return {"backtrace": None, "why": "gdb not installed"}
        out = os.path.join(raw, "%s.bt.txt" % tag)
        r = subprocess.run(["gdb", "-batch", "-nx", "-ex", "bt 12", "-ex", "info threads",
                            "-ex", "thread apply all bt 30", binary, core],
                           capture_output=True, text=True, timeout=300)
        with open(out, "w") as f:
            f.write(r.stdout + r.stderr)
        # "bt 12" comes first: the thread that took the signal.
        frames = []
        for l in r.stdout.splitlines():
            if l.startswith("#") and l not in frames and len(frames) < 6:
                frames.append(l)
        return {"backtrace": out, "crash_frames": frames}
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"backtrace": None, "why": "gdb: %s" % e}
    finally:
        os.unlink(core)


class RouterDied(Exception):
    """The router was found dead when a load generator run failed."""


def record_death(doc, router, workers, name, raw, during):
    """A router death in doc["router_deaths"]: when (during case @p name, or after it), how
    (exit status), and where (the backtrace of its core, when it died of a signal)."""
    d = {"workers": workers, "after" if not during else "during": name,
         "exit": router.p.returncode}
    if router.p.returncode < 0:
        d.update(core_backtrace(router.cmd[0], router.cwd, router.p.pid, raw,
                                "ringway.death%d" % len(doc["router_deaths"])))
    doc["router_deaths"].append(d)


class Router:
    def __init__(self, a, tmp, workers, raw):
        self.prefix = "%s-rw" % a.prefix
        self.tmp = tmp
        conf = os.path.join(tmp, "ringway.conf")
        write_config(conf, tmp, workers)
        # 2 vCPUs here: the control lcore and worker 1 share CPU 0 with the load generator,
        # worker 0 has CPU 1 (the control lcore sleeps in its poll).
        lcores = ["-l", "0,1"] if workers == 1 else ["--lcores", "0@0,1@1,2@0"]
        self.cmd = [os.path.join(a.build, "app/ringway/ringway")] + lcores + [
            "--no-pci", "--no-huge", "-m", "1024", "--file-prefix", self.prefix,
            "--vdev", "net_memif0,role=server,socket=%s/memif.sock,mac=%s,rsize=%d"
            % (tmp, ROUTER_MAC, a.rsize), "--", "--config", conf]
        self.log = open(os.path.join(raw, "ringway.w%d.log" % workers), "a+")
        # Its own directory, where a core of a death goes (router_deaths: its backtrace).
        self.cwd = tempfile.mkdtemp(prefix="router.", dir=tmp)
        self.p = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                  cwd=self.cwd, preexec_fn=allow_core)
        self.ctl = os.path.join(a.build, "app/ringwayctl/ringwayctl")
        for _ in range(200):
            self.log.flush()
            with open(self.log.name) as f:
                if "serving on port" in f.read():
                    return
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("ringway did not start: see %s" % self.log.name)

    def stats(self):
        if self.p.poll() is not None:
            return {}
        out = subprocess.run([self.ctl, "--socket", os.path.join(self.tmp, "ctl.sock"),
                              "stats"], capture_output=True, text=True, timeout=10).stdout
        s = {}
        for line in out.splitlines():
            k, _, v = line.partition(" ")
            try:
                s[k] = int(v)
            except ValueError:
                s[k] = v
        return s

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        shutil.rmtree("/var/run/dpdk/%s" % self.prefix, ignore_errors=True)
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()


GEN_NODE = "198.18.16.1"  # the generator-only loopback's one node


def generator_only(a, tmp, raw, workers, name, args):
    """The load generator alone, no router: ringway-loadgen to a second ringway-loadgen that is
    only the node emulator (--serve), over net_memif, both on CPU 0 (where the load generator
    runs beside the router: its client and node work share that CPU in the router's cases
    too; the node side sleeps 20 us when idle, so it yields the CPU instead of taking a
    whole time slice from the generator). An unpaced run (--rate max, a 4,096-request window: a closed loop, no loss by
    construction) gives its capacity; a zero-loss search up to that capacity gives the rate
    it sustains alone. The router's search then starts at that capacity."""
    lg = os.path.join(a.build, "app/ringway-loadgen/ringway-loadgen")
    sock = os.path.join(tmp, "gen.%s.w%d.sock" % (name, workers))
    res = {}
    for what in ("capacity", "search"):
        sprefix, cprefix = "%s-gs" % a.prefix, "%s-gc" % a.prefix
        out = os.path.join(raw, "%s.w%d.generator_only.%s.json" % (name, workers, what))
        srv_cmd = [lg, "-l", "0", "--no-pci", "--no-huge", "-m", "512", "--file-prefix",
                   sprefix, "--vdev", "net_memif0,role=server,socket=%s,mac=%s,rsize=%d"
                   % (sock, ROUTER_MAC, a.rsize), "--", "--src", ROUTER_IP, "--dst",
                   CLIENT_IP, "--dst-mac", NODE_MAC, "--nodes", NODE_NET, "--queues",
                   str(workers), "--serve", "--idle-us", "20", "--quiet"] + args
        cmd = [lg, "-l", "0", "--no-pci", "--no-huge", "-m", "1024", "--file-prefix", cprefix,
               "--vdev", "net_memif0,role=client,socket=%s,mac=%s,rsize=%d"
               % (sock, NODE_MAC, a.rsize), "--", "--src", CLIENT_IP, "--dst",
               GEN_NODE + ":11211", "--dst-mac", ROUTER_MAC, "--keys", "100000",
               "--queues", str(workers), "--timeout-ms", "1000", "--quiet", "--json", out]
        if what == "capacity":
            cmd += ["--rate", "max", "--window", "4096", "--duration", str(max(a.trial, 1.0))]
        else:
            hi = res.get("capacity_rps") or a.search_hi
            cmd += ["--search", "--search-lo", str(min(a.search_lo, hi / 2)),
                    "--search-hi", str(hi), "--trial", str(a.trial),
                    "--search-steps", str(a.steps), "--search-repeat", str(a.repeat),
                    "--loss-max", str(a.loss_max), "--lat-trial", "0.1"]
        cmd += args
        log = open(os.path.join(raw, "%s.w%d.generator_only.%s.log" % (name, workers, what)),
                   "w")
        log.write(" ".join(srv_cmd) + "\n" + " ".join(cmd) + "\n")
        log.flush()
        srv = subprocess.Popen(srv_cmd, stdout=log, stderr=subprocess.STDOUT)
        try:
            for _ in range(200):  # its memif socket is there once it serves
                if os.path.exists(sock) or srv.poll() is not None:
                    break
                time.sleep(0.05)
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            log.write(r.stdout + r.stderr)
        finally:
            if srv.poll() is None:
                srv.send_signal(signal.SIGINT)
                try:
                    srv.wait(20)
                except subprocess.TimeoutExpired:
                    srv.kill()
                    srv.wait()
            # DPDK 22.11's memif server may die of the client's disconnect (see run_case):
            # after the measurement, so it costs no figure; its exit is recorded.
            res["serve_exit_" + what] = srv.returncode
            log.close()
            shutil.rmtree("/var/run/dpdk/%s" % sprefix, ignore_errors=True)
            shutil.rmtree("/var/run/dpdk/%s" % cprefix, ignore_errors=True)
            if os.path.exists(sock):
                os.unlink(sock)
        if r.returncode not in (0, 3) or not os.path.exists(out):
            res["error_" + what] = "loadgen exit %d: %s" % (r.returncode, r.stderr[-300:])
            continue
        with open(out) as f:
            doc = json.load(f)
        if what == "capacity":
            run = doc["run"]
            c = run.get("counters", run)
            e = run["elapsed_s"] or 1.0
            res.update({"capacity_rps": c["sent"] / e, "capacity_replies_rps": c["replies"] / e,
                        "capacity_lost": c["lost"]})
        else:
            res["zero_loss_rps"] = doc["search"]["zero_loss_pps"]
    return res


def run_case(a, tmp, raw, workers, name, args, router, search_hi=None):
    out = os.path.join(raw, "%s.w%d.json" % (name, workers))
    search_hi = search_hi or a.search_hi
    prefix = "%s-lg" % a.prefix
    cmd = [os.path.join(a.build, "app/ringway-loadgen/ringway-loadgen"), "-l", "0", "--no-pci",
           "--no-huge", "-m", "1024", "--file-prefix", prefix, "--vdev",
           "net_memif0,role=client,socket=%s/memif.sock,mac=%s,rsize=%d"
           % (tmp, NODE_MAC, a.rsize), "--",
           "--src", CLIENT_IP, "--dst", ROUTER_IP + ":11211", "--dst-mac", ROUTER_MAC,
           "--nodes", NODE_NET, "--keys", "100000", "--queues", str(workers),
           "--search", "--search-lo", str(min(a.search_lo, search_hi / 2)),
           "--search-hi", str(search_hi),
           "--trial", str(a.trial), "--search-steps", str(a.steps),
           "--search-repeat", str(a.repeat), "--loss-max", str(a.loss_max),
           "--timeout-ms", "1000", "--quiet", "--json", out] + args
    la = loadavg()
    before = router.stats()
    t0 = cpu_ticks(router.p.pid)
    killed = killed_bt = None
    for attempt in range(2):
        lg_cwd = tempfile.mkdtemp(prefix="loadgen.", dir=tmp)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=lg_cwd, preexec_fn=allow_core)
        try:
            out_text, err_text = p.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise
        r = subprocess.CompletedProcess(cmd, p.returncode, out_text, err_text)
        shutil.rmtree("/var/run/dpdk/%s" % prefix, ignore_errors=True)
        if r.returncode != 0:
            time.sleep(0.5)  # a router dying of the connect or disconnect does so now
            if router.p.poll() is not None:
                with open(os.path.join(raw, "%s.w%d.log" % (name, workers)), "w") as f:
                    f.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
                raise RouterDied()
        # The memif link never came up, or its socket refused the connect (the router still
        # closing the last case's): no request was sent, so one more start measures the same.
        if r.returncode == 1 and attempt == 0 and ("link down after" in r.stderr or
                                                   "Failed to connect socket" in r.stderr):
            print("linerate: %s w%d: memif link not up, starting the load generator again"
                  % (name, workers), file=sys.stderr)
            time.sleep(2)
            continue
        # Killed by a signal: DPDK 22.11's memif PMD unmaps a peer's regions from its
        # interrupt thread while the datapath may be using them (the router's side of it:
        # router_deaths below); seen once at a case's connect. Its search never finished,
        # so it left no figure: one more start, recorded in the case (loadgen_killed).
        if r.returncode < 0 and attempt == 0:
            killed = -r.returncode
            killed_bt = core_backtrace(cmd[0], lg_cwd, p.pid, raw,
                                       "loadgen.%s.w%d" % (name, workers))
            print("linerate: %s w%d: load generator killed by signal %d, starting it again"
                  % (name, workers, killed), file=sys.stderr)
            time.sleep(2)
            continue
        break
    time.sleep(0.5)  # a router that dies of the disconnect does so now
    with open(os.path.join(raw, "%s.w%d.log" % (name, workers)), "w") as f:
        f.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    after = router.stats()
    if r.returncode not in (0, 3):
        raise RuntimeError("%s: loadgen exit %d: %s" % (name, r.returncode, r.stderr[-500:]))
    with open(out) as f:
        doc = json.load(f)
    delta = {k: after[k] - before.get(k, 0) for k in after
             if isinstance(after[k], int) and after[k] != before.get(k, 0)}
    res = summarise(doc, workers, name, la, delta, cpu_ticks(router.p.pid) - t0)
    if killed is not None:
        res["loadgen_killed"] = killed
        res["loadgen_killed_backtrace"] = killed_bt
    return res


def summarise(doc, workers, name, la, router_delta, router_ticks):
    s = doc["search"]
    zl = s["zero_loss_pps"]
    best = None
    for t in s["trials"]:
        if t["pass"] and t["rate"] == zl:
            best = t
    res = {"case": name, "workers": workers, "loadavg_1min": la, "zero_loss_rps": zl,
           "trials": len(s["trials"]), "router_counters": router_delta,
           "router_cpu_ticks": router_ticks,
           "generator_limited_trials": sum(1 for t in s["trials"] if t["generator_limited"]),
           # Over every trial of the search: what the answers were.
           "all_trials": {k: sum(t[k] for t in s["trials"]) for k in (
               "sent", "replies", "lost", "hits", "misses", "errors", "rx_bad_reply",
               "value_size_mismatch", "rx_stray", "node_bad_request")}}
    if best is not None:
        e = best["elapsed_s"]
        rx_pkts = best["sent"] + best["node_datagrams"]  # what the router received
        tx_pkts = best["rx_packets"]  # what it sent
        rx_bits = (best["tx_bytes"] + best["node_bytes"] + WIRE_OVERHEAD * rx_pkts) * 8 / e
        tx_bits = (best["rx_bytes"] + WIRE_OVERHEAD * tx_pkts) * 8 / e
        res.update({
            "rps_per_worker": zl / workers,
            "router_rx_pps": rx_pkts / e, "router_tx_pps": tx_pkts / e,
            "pps_per_worker": (rx_pkts + tx_pkts) / e / workers,
            "router_rx_bits_per_s": rx_bits, "router_tx_bits_per_s": tx_bits,
            "fraction_of_10gbe_per_worker": max(rx_bits, tx_bits) / 1e10 / workers,
            "hits": best["hits"], "misses": best["misses"], "errors": best["errors"],
            "node_cross": best["node_cross"], "replies": best["replies"],
            "sent": best["sent"],
        })
    res["latency"] = []
    for lat in s["latency"]:
        ph = [v for k, v in lat.items() if k.startswith("at_")][0]
        res["latency"].append({"fraction": lat["fraction"], "rate": lat["rate"],
                               "lost": ph["lost"], "sent": ph["sent"],
                               "p50_us": ph["latency_us"]["p50"],
                               "p99_us": ph["latency_us"]["p99"],
                               "p99.9_us": ph["latency_us"]["p99.9"]})
    return res


def dataplane_figures(a):
    """Forward + reply cycles of bench_dataplane (mixed protocols, 100-byte replies): from
    --dataplane-json, else a short run of the bench itself when it is built."""
    doc = None
    if a.dataplane_json and os.path.exists(a.dataplane_json):
        with open(a.dataplane_json) as f:
            doc = json.load(f)
    else:
        b = os.path.join(a.build, "tests/bench/dataplane/bench_dataplane")
        if os.path.exists(b):
            r = subprocess.run([b, "--packets", "32768"], capture_output=True, text=True,
                               timeout=300)
            if r.returncode == 0:
                doc = json.loads(r.stdout)
    if not doc or "summary" not in doc or "forward_cycles" not in doc["summary"]:
        return None
    s = doc["summary"]
    fwd, rep = s["forward_cycles"], s["reply_100_cycles"]
    hz = doc["tsc_hz"]
    return {"forward_cycles": fwd, "reply_cycles": rep, "tsc_hz": hz,
            "requests_per_s_per_core": hz / (fwd + rep),
            "loadavg_1min": doc.get("loadavg_1min")}


def chart(doc, png, base):
    rows = [c for c in doc["cases"] if not c["case"].startswith("handoff")]
    names = sorted({c["case"] for c in rows}, key=list(CASES).index)
    with open(base + ".tput.dat", "w") as f:
        f.write("# case w1 w2\n")
        for n in names:
            v = {c["workers"]: c["zero_loss_rps"] for c in rows if c["case"] == n}
            f.write('"%s" %s %s\n' % (n, v.get(1, "NaN"), v.get(2, "NaN")))
    with open(base + ".lat.dat", "w") as f:
        f.write("# case p50@10 p50@50 p50@90 p99@90\n")
        for n in names:
            c = [c for c in rows if c["case"] == n and c["workers"] == 1] or \
                [c for c in rows if c["case"] == n]
            lat = c[0]["latency"] if c else []
            get = (lambda i, k: lat[i][k] if len(lat) > i else "NaN")
            f.write('"%s" %s %s %s %s\n' % (n, get(0, "p50_us"), get(1, "p50_us"),
                                            get(2, "p50_us"), get(2, "p99_us")))
    # Only the worker counts measured (RINGWAY_BENCH_LR_WORKERS): gnuplot refuses a column
    # with no point.
    have = sorted({c["workers"] for c in rows})
    tput = ", ".join("'%s.tput.dat' using %d%s title \"%d worker%s\"" % (
        base, 1 + w, ":xtic(1)" if i == 0 else "", w, "" if w == 1 else "s")
        for i, w in enumerate(have))
    script = """
set terminal pngcairo size 1400,560 font ",10" noenhanced
set output '%(png)s'
set multiplot layout 1,2 title "ringway over net_memif (real binary, 1,000-node ring; 2 vCPUs shared with the load generator)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key below horizontal
set grid ytics
set xtics nomirror rotate by -25 font ",9"
set title "zero-loss throughput (requests/s, loss <= %(loss)s)"
set yrange [0:*]
plot %(tput)s
set title "latency, %(lat_w)s (us, log scale)"
set logscale y
set yrange [1:*]
plot '%(base)s.lat.dat' using 2:xtic(1) title "p50 at 10%%", '' using 3 title "p50 at 50%%", '' using 4 title "p50 at 90%%", '' using 5 title "p99 at 90%%"
unset multiplot
""" % {"png": png, "base": base, "loss": doc["loss_max"], "tput": tput,
       "lat_w": "1 worker" if 1 in have else "2 workers"}
    with open(base + ".gp", "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", base + ".gp"], check=True)


def table(doc):
    print("%-12s %2s %12s %10s %10s %7s %9s %9s %9s %9s %11s %11s %5s" % (
        "case", "w", "zero-loss/s", "pps/worker", "Gb/s rx", "10GbE", "p50@10%",
        "p50@50%", "p50@90%", "p99@90%", "gen cap/s", "gen 0-loss", "x"))
    for c in doc["cases"]:
        lat = {round(x["fraction"] * 100): x for x in c["latency"]}
        g = (lambda f, k: "%.1f" % lat[f][k] if f in lat else "-")
        go = c.get("generator_only", {})
        print("%-12s %2d %12.0f %10.0f %10.3f %6.1f%% %9s %9s %9s %9s %11s %11s %5s%s" % (
            c["case"], c["workers"], c["zero_loss_rps"], c.get("pps_per_worker", 0),
            c.get("router_rx_bits_per_s", 0) / 1e9,
            100 * c.get("fraction_of_10gbe_per_worker", 0), g(10, "p50_us"),
            g(50, "p50_us"), g(90, "p50_us"), g(90, "p99_us"),
            "%.0f" % go["capacity_rps"] if "capacity_rps" in go else "-",
            "%.0f" % go["zero_loss_rps"] if "zero_loss_rps" in go else "-",
            "%.1f" % c["generator_headroom"] if c.get("generator_headroom") else "-",
            " GENERATOR-BOUND" if c.get("generator_bound") else ""))
    if doc.get("handoff"):
        print("hand-off: %s" % json.dumps(doc["handoff"]))
    for d in doc.get("router_deaths", []):
        print("router died (exit %s) %s %s, %d worker(s); restarted" % (
            d["exit"], "during" if "during" in d else "after", d.get("during", d.get("after")),
            d["workers"]))
        if d.get("backtrace"):
            print("  backtrace: %s" % d["backtrace"])
            for f in d.get("crash_frames", []):
                print("    %s" % f)
        elif d.get("why"):
            print("  no backtrace: %s" % d["why"])
    for c in doc["cases"]:
        if "loadgen_killed" in c:
            print("load generator killed by signal %d in %s w%d; started again" % (
                c["loadgen_killed"], c["case"], c["workers"]))
    if doc.get("dataplane"):
        print("bench_dataplane: %s" % json.dumps(doc["dataplane"]))


def check(doc):
    """The smoke run's assertions, on correctness only (a benchmark never fails on time): the
    harness got answers, every answer was a hit of the right size, the router's identity held."""
    bad = []
    for c in doc["cases"]:
        t = c["all_trials"]
        if t["replies"] == 0:
            bad.append("%s: no reply at all" % c["case"])
        for k in ("misses", "errors", "rx_bad_reply", "value_size_mismatch", "rx_stray",
                  "node_bad_request"):
            if t[k]:
                bad.append("%s: %s %d" % (c["case"], k, t[k]))
        if t["hits"] != t["replies"]:
            bad.append("%s: %d hits of %d replies" % (c["case"], t["hits"], t["replies"]))
    ids = doc.get("router_identity") or ["missing"]
    if any(i != "ok" for i in ids):
        bad.append("router identity: %s" % ids)
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--png")
    ap.add_argument("--raw")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--handoff", action="store_true", default=True)
    ap.add_argument("--no-handoff", dest="handoff", action="store_false")
    ap.add_argument("--trial", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--loss-max", type=float, default=0.00001)
    ap.add_argument("--search-lo", type=float, default=10000)
    ap.add_argument("--search-hi", type=float, default=2000000)
    ap.add_argument("--rsize", type=int, default=14)
    ap.add_argument("--prefix", default="rwlr%d" % os.getpid())
    ap.add_argument("--dataplane-json")
    ap.add_argument("--no-generator-only", dest="generator_only", action="store_false",
                    default=True, help="skip the generator-only loopback case")
    ap.add_argument("--fixed-top", dest="top_from_generator", action="store_false",
                    default=True, help="start the router's search at --search-hi, not at "
                    "the generator's measured capacity")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)  # the processes run in directories of their own
    if a.quick:
        a.workers, a.cases, a.handoff = "1", "ascii_100", False
        # A smoke run: short trials on a shared machine, so a scheduling stall may lose a
        # few requests; it checks the harness and the answers, not the figure.
        a.trial, a.steps, a.search_hi, a.search_lo, a.loss_max = 0.3, 4, 300000, 5000, 0.001
    tmp = tempfile.mkdtemp(prefix="ringway-linerate.")
    raw = a.raw or tmp
    os.makedirs(raw, exist_ok=True)
    doc = {"benchmark": "linerate", "quick": a.quick, "trial_s": a.trial,
           "loss_max": a.loss_max, "search_steps": a.steps, "search_repeat": a.repeat,
           "nodes": NODES, "online_cpus": os.cpu_count(), "memif_rsize": a.rsize,
           "cases": [], "router_identity": [], "router_deaths": []}
    try:
        for w in [int(x) for x in a.workers.split(",")]:
            cases = [(n, CASES[n]) for n in a.cases.split(",")]
            if w == 2 and a.handoff:
                cases += list(HANDOFF.items())
            router = Router(a, tmp, w, raw)
            try:
                for name, (args, what) in cases:
                    gen = generator_only(a, tmp, raw, w, name, args) if a.generator_only \
                        else {}
                    # The router's search starts at what the generator can offer (a fixed
                    # --search-hi only when that was not measured).
                    top = gen.get("capacity_rps") if a.top_from_generator else None
                    for attempt in range(2):
                        if router.p.poll() is not None:
                            router.stop()
                            router = Router(a, tmp, w, raw)
                        try:
                            c = run_case(a, tmp, raw, w, name, args, router, top)
                        except RouterDied:
                            # Died while the load generator connected or ran: no figure;
                            # recorded, and the case measured once more on a new router.
                            record_death(doc, router, w, name, raw, during=True)
                            if attempt == 1:
                                raise RuntimeError("%s: the router died twice" % name)
                            print("linerate: %s w%d: router died (exit %d), starting it "
                                  "again" % (name, w, router.p.returncode), file=sys.stderr)
                            continue
                        break
                    c["what"] = what
                    c["search_hi"] = top or a.search_hi
                    if gen:
                        c["generator_only"] = gen
                        cap = gen.get("capacity_rps")
                        # The figure is the router's when the generator alone offers at least
                        # twice it (issue 30); otherwise it may be the generator's.
                        c["generator_headroom"] = cap / c["zero_loss_rps"] \
                            if cap and c["zero_loss_rps"] else None
                        c["generator_bound"] = not cap or cap < 2 * c["zero_loss_rps"]
                    doc["cases"].append(c)
                    print("linerate: %s w%d: zero loss %.0f req/s (load %.1f)" % (
                        name, w, c["zero_loss_rps"], c["loadavg_1min"]), file=sys.stderr)
                    if router.p.poll() is not None:
                        # Died as the load generator went away (memif disconnect): record
                        # it and go on with a new router.
                        c["router_exit"] = router.p.returncode
                        record_death(doc, router, w, name, raw, during=False)
                        router.stop()
                        router = Router(a, tmp, w, raw)
            finally:
                text = router.stop()
            ident = [l.split()[1] for l in text.splitlines() if l.startswith("identity ")]
            # Every router that exited by SIGINT printed its identity (one per start).
            doc["router_identity"] += ident or ["missing"]
        h = {c["case"]: c for c in doc["cases"] if c["case"].startswith("handoff")}
        if "handoff_0" in h and "handoff_50" in h and h["handoff_50"]["zero_loss_rps"] > 0:
            r0, r50 = h["handoff_0"]["zero_loss_rps"], h["handoff_50"]["zero_loss_rps"]
            hz = None
            dp = dataplane_figures(a)
            doc["dataplane"] = dp
            hz = dp["tsc_hz"] if dp else None
            # Two workers: each request costs 2 / rate core-seconds; half the replies crossed.
            extra = (2.0 / r50 - 2.0 / r0) / 0.5
            doc["handoff"] = {"zero_loss_rps_no_cross": r0, "zero_loss_rps_half_cross": r50,
                              "handed_over": h["handoff_50"]["router_counters"].get(
                                  "handed_over", 0),
                              "taken_over": h["handoff_50"]["router_counters"].get(
                                  "taken_over", 0),
                              "derived_cost_ns_per_handed_reply": extra * 1e9,
                              "derived_cost_cycles": extra * hz if hz else None}
        elif not a.quick:
            doc["dataplane"] = dataplane_figures(a)
        dp = doc.get("dataplane")
        if dp:
            one = [c["zero_loss_rps"] for c in doc["cases"] if c["workers"] == 1 and
                   c["case"] in ("ascii_100", "meta_100", "binary_100")]
            if one:
                m = sum(one) / len(one)
                doc["binary_vs_dataplane"] = {
                    "memif_single_key_100_rps_1_worker": m,
                    "dataplane_rps_per_core": dp["requests_per_s_per_core"],
                    "ratio": m / dp["requests_per_s_per_core"]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    if a.png and shutil.which("gnuplot"):
        chart(doc, a.png, os.path.splitext(a.out)[0])
    table(doc)
    if a.quick:
        bad = check(doc)
        for b in bad:
            print("linerate: FAIL %s" % b, file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
