#!/usr/bin/env python3
"""Query a DPDK telemetry v2 socket (SOCK_SEQPACKET, JSON), e.g. ringway's counters:

  telemetry.py /var/run/dpdk/rw-demo/dpdk_telemetry.v2 /ringway/stats [/ringway/nodes ...]
  telemetry.py --nodes-table SOCK      per-node split as a table
"""
import json
import socket
import sys


def query(path, cmd, timeout=3.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(path)
        greeting = json.loads(s.recv(1 << 16).decode())
        s.send(cmd.encode())
        return json.loads(s.recv(greeting.get("max_output_len", 16384) + 1024).decode())
    finally:
        s.close()


def nodes_table(path):
    body = query(path, "/ringway/nodes").get("/ringway/nodes", {})
    items = body.items() if isinstance(body, dict) else enumerate(body)
    rows = [(str(v.get("name", k)), v) for k, v in items if isinstance(v, dict)]
    total = sum(v.get("forwarded", 0) for _, v in rows) or 1
    print("%-10s %-18s %12s %12s %7s" % ("node", "address", "forwarded", "returned", "share"))
    for name, v in rows:
        addr = "%s:%s" % (v.get("address", v.get("ip", "?")), v.get("port", ""))
        print("%-10s %-18s %12d %12d %6.1f%%" % (name, addr, v.get("forwarded", 0),
                                                  v.get("returned", 0),
                                                  100.0 * v.get("forwarded", 0) / total))


def main(argv):
    if len(argv) >= 3 and argv[1] == "--nodes-table":
        nodes_table(argv[2])
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    for cmd in argv[2:]:
        print(json.dumps(query(argv[1], cmd), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
