#!/usr/bin/env python3
"""e2e, AF_XDP mode only: ringway on net_af_xdp shares the router's veth with the kernel.

  - while ringway serves memcached through its AF_XDP socket, the router namespace's kernel
    (which holds 198.18.0.1 on the veth) answers ping and accepts a TCP connection (`nc -l`
    in the router namespace, a client in the client namespace, data both ways); the steering
    program passed that traffic to the kernel (its counters moved), ringway answered none
    of it itself, and memcached through the router keeps working meanwhile;
  - after ringway exits on SIGINT and on SIGTERM, no XDP program is left on the veth
    (`ip -d link`, `bpftool net`);
  - after SIGKILL ringway's program stays attached (nothing runs to remove it): the kernel
    then gets the memcached datagrams too and answers them with ICMP port unreachable (a
    connected client sees ECONNREFUSED), ping still works; the next start detects the
    program by its name, says so in its log, replaces it with its own and serves; its clean
    exit leaves nothing.

Environment: RINGWAY.
"""
import os
import signal
import socket
import subprocess
import sys
import time

import harness as h

TCP_PORT = 5555


def router_pid(sb):
    with open(os.path.join(sb.state, "router.pid")) as f:
        return int(f.read())


def wait_exit(pid, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def bpftool_net(sb):
    r = subprocess.run(["ip", "netns", "exec", sb.env["NS_ROUTER"], "bpftool", "net", "show",
                        "dev", sb.env["ROUTER_IF"]], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    return r.stdout.decode(errors="replace")


def no_program_left(t, sb, how):
    prog = sb.xdp_prog()
    t.eq(prog, None, "after %s: no XDP program on the router's veth0 (ip -d link)" % how)
    net = bpftool_net(sb)
    xdp = net.split("xdp:")[1].split("tc:")[0].strip() if "xdp:" in net else net
    t.eq(xdp, "", "after %s: bpftool net lists no XDP program" % how)


def ping(sb, count=3):
    r = subprocess.run(["ip", "netns", "exec", sb.client_ns, "ping", "-c", str(count), "-i",
                        "0.2", "-W", "1", sb.router[0]], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    out = r.stdout.decode(errors="replace")
    return r.returncode == 0 and (" %d received" % count) in out, out.strip().splitlines()[-2:]


def tcp_exchange(sb):
    """nc -l on the router address in the router namespace; a client connects from the
    client namespace. Returns (what the client got, what nc printed)."""
    nc = subprocess.Popen(["ip", "netns", "exec", sb.env["NS_ROUTER"], "nc", "-l",
                           sb.router[0], str(TCP_PORT)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    got = b""
    try:
        nc.stdin.write(b"hello from the router's kernel\n")
        nc.stdin.flush()
        end = time.monotonic() + 5
        while True:
            c = h.socket_in(sb.client_ns, socket.AF_INET, socket.SOCK_STREAM)
            c.settimeout(2.0)
            try:
                c.connect((sb.router[0], TCP_PORT))
                break
            except (ConnectionRefusedError, socket.timeout):
                c.close()
                if time.monotonic() > end:
                    raise
                time.sleep(0.1)
        c.sendall(b"hello from the client\n")
        while not got.endswith(b"\n"):
            chunk = c.recv(4096)
            if not chunk:
                break
            got += chunk
        # memcached through ringway while the TCP connection is open.
        u = sb.client(timeout=2.0)
        try:
            mc = u.request(b"set afxdp:tcp 0 0 2\r\nok\r\n")
        except h.Timeout:
            mc = None
        u.close()
        c.close()
        out, _ = nc.communicate(timeout=5)
    finally:
        if nc.poll() is None:
            nc.kill()
            nc.wait()
    return got, out, mc


def refused(sb):
    """A memcached get from a connected UDP socket: 'refused' when the kernel answered it with
    ICMP port unreachable, 'reply' when something answered, 'silence' otherwise."""
    s = h.socket_in(sb.client_ns, socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    try:
        s.connect(sb.router)
        s.send(b"\x00\x01\x00\x00\x00\x01\x00\x00get afxdp:killed\r\n")
        try:
            s.recv(2048)
            return "reply"
        except ConnectionRefusedError:
            return "refused"
        except socket.timeout:
            return "silence"
    finally:
        s.close()


def main():
    h.need_root()
    ringway = h.binary("RINGWAY", "app/ringway/ringway")
    t = h.Checker("e2e afxdp")
    sb = h.Sandbox("ax", nodes=2, port="af_xdp")
    conf = sb.config()

    # 1. Serving, with ping and TCP answered by the kernel.
    sb.start_router(ringway, conf)
    t.ok(sb.wait_serving(), "router serves every node after start-up")
    prog = sb.xdp_prog()
    t.ok(prog is not None and "ringway_steer" in prog,
         "ringway's steering program on the router's veth0 (%s)" % prog)
    t.ok(prog is not None and prog.split()[1] in bpftool_net(sb),
         "bpftool net in the router namespace lists it")
    s0, r0 = sb.steer(), sb.stats()
    ok, tail = ping(sb)
    t.ok(ok, "ping 198.18.0.1 answered while ringway runs (%s)" % " / ".join(tail))
    got, out, mc = tcp_exchange(sb)
    t.eq(got, b"hello from the router's kernel\n", "TCP: the client got nc's line")
    t.ok(b"hello from the client" in out, "TCP: nc in the router namespace got the client's "
         "line (%r)" % out[:80])
    t.eq(mc, b"STORED\r\n", "memcached through ringway while the TCP connection was open")
    s1, r1 = sb.steer(), sb.stats()
    d = {k: s1[k] - s0.get(k, 0) for k in s1}
    t.ok(d.get("pass_not_udp", 0) >= 3 + 3,
         "steering passed ICMP and TCP to the kernel (pass_not_udp +%d)"
         % d.get("pass_not_udp", 0))
    t.ok(d.get("to_xsk_request", 0) >= 1 and d.get("to_xsk_reply", 0) >= 1,
         "and steered the memcached request and reply to ringway (%r)"
         % {k: d.get(k) for k in ("to_xsk_request", "to_xsk_reply")})
    t.eq(s1.get("xsk_missing"), 0, "no steered packet missed ringway's AF_XDP socket")
    t.eq(r1["answered"] - r0["answered"], 0, "ringway answered none of it itself")
    sb.stop_router()
    no_program_left(t, sb, "SIGINT")

    # 2. SIGTERM.
    sb.start_router(ringway, conf)
    t.ok(sb.wait_serving(), "second start serves")
    pid = router_pid(sb)
    os.kill(pid, signal.SIGTERM)
    t.ok(wait_exit(pid), "ringway exits on SIGTERM")
    log = sb.stop_router()
    t.ok("identity ok" in log, "it printed its counters at exit")
    no_program_left(t, sb, "SIGTERM")

    # 3. SIGKILL: the program stays until the next start replaces it.
    sb.start_router(ringway, conf)
    t.ok(sb.wait_serving(), "third start serves")
    pid = router_pid(sb)
    os.kill(pid, signal.SIGKILL)
    t.ok(wait_exit(pid), "ringway killed (SIGKILL)")
    sb.stop_router()
    killed = sb.xdp_prog()
    t.ok(killed is not None and "ringway_steer" in killed,
         "after SIGKILL ringway's program is still attached (%s), as documented" % killed)
    t.eq(refused(sb), "refused", "with no AF_XDP socket left the kernel refuses memcached "
         "datagrams (ICMP port unreachable)")
    ok, tail = ping(sb, 2)
    t.ok(ok, "ping still answered by the kernel (%s)" % " / ".join(tail))
    sb.start_router(ringway, conf)
    t.ok(sb.wait_serving(), "the next start serves")
    kid = killed.split()[1] if killed else "?"
    t.ok("removed XDP program id %s that an earlier ringway left" % kid in sb.router_log(),
         "the next start says it removed the killed run's program (id %s)" % kid)
    prog = sb.xdp_prog()
    t.ok(prog is not None and "ringway_steer" in prog and killed is not None and
         prog.split()[1] != killed.split()[1],
         "the killed run's program was replaced (%s -> %s)" % (killed, prog))
    sb.stop_router()
    no_program_left(t, sb, "the restart's SIGINT")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
