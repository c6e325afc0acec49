#!/usr/bin/env python3
"""e2e: the control socket's refusals, persistence and permissions on the running router.

1. Refused input under memcaslap -U load: malformed commands, unknown nodes, duplicate
   names and addresses, weight 0 on add, removing the last member, a stale if-epoch,
   non-printable bytes, a 1 MB line, a client that connects and says nothing. Each gets
   `ERROR <reason>` or is disconnected; the epoch, `list` and the state file stay exactly
   as they were; other clients are served meanwhile; memcaslap sees no timeout or error and
   the router drops nothing.
2. A non-root user cannot connect to the socket (setpriv --reuid=nobody ringwayctl: exit 2,
   permission denied); the socket is mode 0600, owned by root.
3. Restart: after changes, a restarted router shows exactly the same `list` and `epoch`.
   A corrupt state file (one byte changed; truncated) stops the start with a message naming
   the file, and the file is left byte-identical; put back, the router starts as before.

Environment: RINGWAY, RINGWAYCTL.
"""
import os
import stat
import subprocess
import sys
import time

import control_util as cu
import harness as h

IDLE_S = 30  # the router's control idle timeout (CTL_DEFAULT_IDLE_MS)


def membership(ctl):
    """`list` without the router's live pairs (traffic counters, next hop)."""
    rc, out, _ = ctl.run("list")
    keep = ("name", "addr", "weight", "state", "share", "mac")
    lines = []
    for line in out.splitlines():
        p = line.split()
        pairs = dict(zip(p[0::2], p[1::2]))
        lines.append(" ".join("%s %s" % (k, pairs.get(k)) for k in keep) if "name" in pairs
                     else line)
    return rc, lines


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e control admin")
    sb = h.Sandbox("ca", nodes=5)
    ctl = cu.Ctl(sb)
    conf = cu.start(sb, ringway, 4)
    t.ok(cu.wait_resolved(sb, 4), "router serves node1..4")
    spare = "%s:11211" % sb.node_ips[4]

    # ---- 1. refused input under load
    silent = cu.Session(cu.socket_path(sb))  # connects and says nothing
    silent_t0 = time.monotonic()
    half = cu.Session(cu.socket_path(sb))    # sends half a line and stalls
    half.send(b"add node9 198.18.1.")
    epoch0 = ctl.epoch()
    _, list0 = membership(ctl)
    state0 = read_bytes(cu.state_path(sb)) if os.path.exists(cu.state_path(sb)) else None
    s0 = h.settled_stats(sb)
    load = cu.Memcaslap(sb, 12)
    time.sleep(1.5)
    s = cu.Session(cu.socket_path(sb))
    bad = [
        ("frobnicate", "unknown command"),
        ("add", "add without arguments"),
        ("add node1 %s" % spare, "duplicate name"),
        ("add nodeX %s:11211" % sb.node_ips[0], "duplicate address:port"),
        ("add nodeY %s weight 0" % spare, "weight 0 on add"),
        ("add nodeY %s weight 10001" % spare, "weight above the limit"),
        ("add no/de %s" % spare, "bad name"),
        ("add nodeY 198.18.1.5:70000", "bad port"),
        ("add nodeY 198.18.1.500:11211", "bad address"),
        ("add nodeY %s mac 01:00:5e:00:00:01" % spare, "multicast MAC"),
        ("add nodeY %s colour blue" % spare, "unknown option"),
        ("remove nosuch", "remove an unknown node"),
        ("weight nosuch 2", "weight of an unknown node"),
        ("weight node1 -1", "negative weight"),
        ("remove", "remove without a name"),
        ("if-epoch %d remove node1" % (epoch0 + 7), "stale if-epoch"),
        ("if-epoch x remove node1", "malformed if-epoch"),
        ("commit", "commit without begin"),
        ("abort", "abort without begin"),
        ("plan frob", "plan of an unknown change"),
        ("replace", None),  # opens a block; a bad line is reported at `end`
        ("node1 %s" % sb.node_ips[0], None),
        ("node1 %s:11211" % sb.node_ips[1], None),
        ("end", "replace with a duplicate name"),
        ("add nodeY \x01\x02 198.18.1.5", "non-printable bytes"),
    ]
    for line, what in bad:
        s.send(line.encode("latin-1") + b"\n")
        if what is None:
            continue
        head, _ = s.reply()
        t.ok(head.startswith("ERROR ") and len(head) > 8, "%s -> %s" % (what, head))
    # Removing the last member: in a transaction, remove until one is left.
    head, _ = s.cmd("begin")
    t.ok(head.startswith("OK transaction open"), "begin: %s" % head)
    for n in ("node1", "node2", "node3"):
        head, _ = s.cmd("remove " + n)
        t.ok(head.startswith("OK queued"), "in a transaction: remove %s -> %s" % (n, head))
    head, _ = s.cmd("remove node4")
    t.ok(head.startswith("ERROR "), "removing the last member -> %s" % head)
    head, _ = s.cmd("abort")
    t.ok(head.startswith("OK transaction aborted"), "abort: %s" % head)
    _, list_now = membership(ctl)
    t.eq(list_now, list0, "list unchanged by the refused commands")
    state_now = read_bytes(cu.state_path(sb)) if os.path.exists(cu.state_path(sb)) else None
    t.ok(state_now == state0, "state file unchanged by the refused commands")
    t.eq(ctl.epoch(), epoch0, "epoch unchanged by the refused commands")
    # Weight 0 on every member: the last one is refused (checked at once in a transaction).
    head, _ = s.cmd("weight node1 0")
    t.ok(head.startswith("OK epoch"), "weight node1 0 drains it: %s" % head)
    s.cmd("begin")
    for n in ("node2", "node3"):
        s.cmd("weight %s 0" % n)
    head3, _ = s.cmd("weight node4 0")
    t.ok(head3.startswith("ERROR "), "weight 0 on the last member with weight -> %s" % head3)
    head, _ = s.cmd("abort")
    t.ok(head.startswith("OK transaction aborted"), "abort: %s" % head)
    head, _ = s.cmd("weight node1 1")
    t.ok(head.startswith("OK epoch"), "weight node1 1 restores it: %s" % head)
    epoch1 = epoch0 + 2
    # A 1 MB line: refused and the connection closed, never buffered whole.
    big = cu.Session(cu.socket_path(sb))
    try:
        big.send(b"add " + b"x" * (1 << 20) + b"\n")
    except OSError:
        pass
    t.ok(big.closed(5.0), "a 1 MB line: connection closed by the router")
    t.ok(b"ERROR line too long" in big.buf, "a 1 MB line: ERROR line too long first (%r)"
         % big.buf[:80])
    big.close()
    # Meanwhile the other clients were served: a fresh one and the first session.
    t.eq(ctl.epoch(), epoch1, "a new client is served while others misbehave (epoch)")
    head, _ = s.cmd("epoch")
    t.eq(head, "OK epoch %d" % epoch1, "the first session still served")
    r = load.result()
    cu.check_memcaslap(t, r, "refused commands under load")
    s1 = h.settled_stats(sb)
    t.eq(h.own_drops(h.delta(s0, s1)["drops"]), {}, "no packet dropped by the router meanwhile")
    t.ok(h.identity(s1)[0], "accounting identity: " + h.identity(s1)[1])
    _, list1 = membership(ctl)
    t.eq(list1[1:], list0[1:], "members, weights and shares as before (the refused commands "
         "changed nothing; node1's drain and restore moved the epoch by 2)")

    # The silent client and the half line are disconnected after the idle timeout.
    left = IDLE_S + 3 - (time.monotonic() - silent_t0)
    t.ok(silent.closed(max(left, 0.5)), "a client that says nothing is disconnected after "
         "the idle timeout")
    t.ok(half.closed(3.0), "a client that stalls mid-line is disconnected too")
    silent.close()
    half.close()
    st = ctl.stats()
    t.ok(st.get("ctl.idle_disconnects", 0) >= 2, "ctl.idle_disconnects counts them (%s)"
         % st.get("ctl.idle_disconnects"))
    t.ok(st.get("ctl.long_lines", 0) >= 1, "ctl.long_lines counts the 1 MB line")
    s.close()

    # ---- 2. non-root
    sock = cu.socket_path(sb)
    mode = os.stat(sock)
    t.ok(stat.S_ISSOCK(mode.st_mode) and stat.S_IMODE(mode.st_mode) == 0o600 and
         mode.st_uid == 0, "socket is mode 0600 owned by root (%o, uid %d)"
         % (stat.S_IMODE(mode.st_mode), mode.st_uid))
    rc, out, err = ctl.run("epoch", prefix=["setpriv", "--reuid=nobody", "--regid=nogroup",
                                             "--clear-groups"])
    t.eq(rc, 2, "ringwayctl as nobody: exit 2 (%s)" % err.strip())
    t.ok("ermission denied" in err, "ringwayctl as nobody: permission denied")
    # Even with the directory open to everyone, the socket itself refuses nobody.
    d = os.path.dirname(sock)
    dmode = stat.S_IMODE(os.stat(d).st_mode)
    os.chmod(d, 0o755)
    try:
        rc, out, err = ctl.run("epoch", prefix=["setpriv", "--reuid=nobody",
                                                 "--regid=nogroup", "--clear-groups"])
    finally:
        os.chmod(d, dmode)
    t.ok(rc == 2 and "ermission denied" in err,
         "nobody with the directory searchable: still permission denied (%d, %s)"
         % (rc, err.strip()))

    # ---- 3. restart
    rc, o = ctl.json("add", "node5", spare, "weight", "3", "mac", sb.env["NODE5_MAC"])
    t.eq(rc, 0, "add node5 with a static MAC: %r" % o)
    rc, o = ctl.json("weight", "node2", "2")
    t.eq(rc, 0, "weight node2 2: %r" % o)
    rc, o = ctl.json("remove", "node3")
    t.eq(rc, 0, "remove node3: %r" % o)
    epoch2 = ctl.epoch()
    t.eq(epoch2, epoch1 + 3, "three changes, three epochs")
    _, list2 = membership(ctl)
    _, ring2, _ = ctl.run("ring")
    state2 = read_bytes(cu.state_path(sb))
    t.ok(state0 is None or state2 != state0, "state file rewritten by the changes")
    sb.stop_router()
    sb.start_router(ringway, conf)
    t.eq(ctl.epoch(), epoch2, "after a restart: same epoch")
    _, list3 = membership(ctl)
    t.eq(list3, list2, "after a restart: same list")
    t.eq(ctl.run("ring")[1], ring2, "after a restart: same ring")
    t.eq(read_bytes(cu.state_path(sb)), state2, "a restart does not rewrite the state file")
    t.ok(cu.wait_resolved(sb, 4), "restarted router serves its 4 members")
    sb.stop_router()

    # Corrupt state files: refused, kept byte for byte.
    path = cu.state_path(sb)
    i = state2.index(b"weight 3")
    corrupt = {
        "one byte changed": state2[:i + 7] + b"4" + state2[i + 8:],
        "truncated": state2[:len(state2) // 2],
        "empty": b"",
    }
    for what, data in corrupt.items():
        with open(path, "wb") as f:
            f.write(data)
        r = subprocess.run([h.SANDBOX, "router-start", "--prefix", sb.prefix, "--ringway",
                            ringway, "--config", conf], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        out = r.stdout.decode(errors="replace")
        if r.returncode == 0:
            sb.router_running = True
            sb.stop_router()
        t.ok(r.returncode != 0, "state file %s: the router refuses to start" % what)
        t.ok(path in out, "state file %s: the message names the file (%s)"
             % (what, [ln for ln in out.splitlines() if "ringway:" in ln][-1:]))
        t.eq(read_bytes(path), data, "state file %s: left byte-identical" % what)
    with open(path, "wb") as f:
        f.write(state2)
    sb.start_router(ringway, conf)
    t.eq(ctl.epoch(), epoch2, "state file put back: same epoch again")
    t.eq(membership(ctl)[1], list2, "state file put back: same list again")
    sb.stop_router()
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
