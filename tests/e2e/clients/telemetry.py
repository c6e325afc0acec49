#!/usr/bin/env python3
"""Query a DPDK telemetry v2 socket (SOCK_SEQPACKET, JSON), e.g. ringway's counters:

  telemetry.py /var/run/dpdk/rw-demo/dpdk_telemetry.v2 /ringway/stats [/ringway/nodes ...]
  telemetry.py --nodes-table SOCK      per-node split as a table
  telemetry.py --nonzero SOCK CMD...   "key value" lines of the counters that are not 0
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
    """/ringway/nodes comes flat (node<i>_<field>): print one row per node."""
    body = query(path, "/ringway/nodes").get("/ringway/nodes", {})
    nodes = {}
    for k, v in body.items():
        idx, _, field = k[4:].partition("_")
        if k.startswith("node") and idx.isdigit():
            nodes.setdefault(int(idx), {})[field] = v
    rows = [nodes[i] for i in sorted(nodes)]
    total = sum(v.get("forwarded", 0) for v in rows) or 1
    print("%-10s %-20s %-18s %12s %12s %7s" % ("node", "address", "mac", "forwarded",
                                               "returned", "share"))
    for v in rows:
        print("%-10s %-20s %-18s %12d %12d %6.1f%%" % (
            v.get("name", "?"), v.get("address", "?"), v.get("mac", "?"),
            v.get("forwarded", 0), v.get("returned", 0), 100.0 * v.get("forwarded", 0) / total))


def main(argv):
    if len(argv) >= 3 and argv[1] == "--nodes-table":
        nodes_table(argv[2])
        return 0
    if len(argv) >= 4 and argv[1] == "--nonzero":
        for cmd in argv[3:]:
            for k, v in query(argv[2], cmd).get(cmd.split(",")[0], {}).items():
                if v:
                    print("%-28s %s" % (k, v))
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    for cmd in argv[2:]:
        print(json.dumps(query(argv[1], cmd), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
