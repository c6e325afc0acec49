#!/usr/bin/env python3
"""A live `add` on a running sandbox router, measured (used by scripts/demo.sh):

  control_moved.py --prefix P --ctl RINGWAYCTL --add NAME [--keys N] [--load-seconds S]

NAME is a sandbox node (nodeI) that is not a member yet. Sets N keys through the router,
asks every node directly which keys it holds, prints `ringwayctl plan add`, applies
`ringwayctl add` while memcaslap -U runs through the router, sets the keys again, asks the
nodes again, and prints the fraction that changed owner next to plan's exact fraction and
memcaslap's result. Exit 0 when they agree within 1 percentage point, every moved key went
to NAME and memcaslap saw no timeout, drop or verify failure.
"""
import argparse
import os
import sys

import control_util as cu
import harness as h


def attach(prefix):
    """A harness.Sandbox for a sandbox that is already up (not torn down by this script)."""
    sb = object.__new__(h.Sandbox)
    sb.prefix = prefix
    sb._down = True
    sb.router_running = False
    sb.env = h.Sandbox._read_env(os.path.join("/run/ringway-sandbox", prefix, "env"))
    sb.nodes = int(sb.env["NODES"])
    sb.state = sb.env["STATE_DIR"]
    sb.router = (sb.env["ROUTER_IP"], int(sb.env["MC_PORT"]))
    sb.node_ips = [sb.env["NODE%d_IP" % i] for i in range(1, sb.nodes + 1)]
    sb.client_ns = sb.env["NS_CLIENT"]
    sb.tsock = "/var/run/dpdk/%s/dpdk_telemetry.v2" % sb.env["FILE_PREFIX"]
    return sb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--ctl", required=True)
    ap.add_argument("--add", required=True)
    ap.add_argument("--keys", type=int, default=10000)
    ap.add_argument("--load-seconds", type=int, default=8)
    a = ap.parse_args()
    sb = attach(a.prefix)
    ctl = cu.Ctl(sb, a.ctl)
    t = h.Checker("live add")
    idx = int(a.add[4:])
    addr = "%s:%s" % (sb.node_ips[idx - 1], sb.env["MC_PORT"])
    keys = [b"demo:%d" % i for i in range(a.keys)]

    def v1(k):
        return b"1" + k[-5:]

    def v2(k):
        return b"2" + k[-5:]

    t.eq(cu.set_all(sb, keys, v1)[:3], [], "%d keys set through the router" % a.keys)
    before = cu.single_owner(t, cu.owners(sb, keys, v1), "before the add")
    rc, out, _ = ctl.run("plan", "add", a.add, addr)
    print("$ ringwayctl plan add %s %s\n%s" % (a.add, addr, out.rstrip()), flush=True)
    _, plan = ctl.json("plan", "add", a.add, addr)
    load = cu.Memcaslap(sb, a.load_seconds)
    import time
    time.sleep(min(2.0, a.load_seconds / 3.0))
    rc, out, err = ctl.run("add", a.add, addr)
    print("$ ringwayctl add %s %s   (under memcaslap load)\n%s%s" % (a.add, addr, out, err),
          flush=True)
    st = ctl.stats()
    print("publish latency: %s us from the command to every worker on the new epoch"
          % st.get("ctl.change_last_us"), flush=True)
    res = load.result()
    cu.check_memcaslap(t, res, "memcaslap through the add")
    t.eq(cu.set_all(sb, keys, v2)[:3], [], "the keys set again through the router")
    after = cu.single_owner(t, cu.owners(sb, keys, v2), "after the add")
    moved = [k for k in keys if before[k] != after[k]]
    frac = len(moved) / float(len(keys))
    print("moved fraction: planned %.4f, measured %.4f (%d of %d keys, asked at the nodes)"
          % (plan.get("moved", -1), frac, len(moved), len(keys)), flush=True)
    t.ok(abs(frac - plan.get("moved", -1)) <= 0.01, "measured within 1 point of plan")
    t.eq(sorted(set(after[k] for k in moved)), [idx], "every moved key went to %s" % a.add)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
