"""Network-namespace helpers for the e2e tests (stdlib only, Linux, root).

A socket belongs to the network namespace its creating thread was in when it was made, and
keeps it. socket_in(ns, ...) enters the namespace /run/netns/<ns> with setns(2), makes the
socket and returns to the caller's namespace, so one test process can hold sockets in the
client namespace and in every node namespace at once.
"""
import ctypes
import ctypes.util
import os
import socket

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "setns: " + os.strerror(e))


class netns:
    """Context manager: run the body inside network namespace `name` (None = stay)."""

    def __init__(self, name):
        self.name = name
        self.home = None

    def __enter__(self):
        if self.name is None:
            return self
        self.home = os.open("/proc/self/ns/net", os.O_RDONLY)
        target = os.open("/run/netns/" + self.name, os.O_RDONLY)
        try:
            _setns(target)
        finally:
            os.close(target)
        return self

    def __exit__(self, *exc):
        if self.home is not None:
            try:
                _setns(self.home)
            finally:
                os.close(self.home)
                self.home = None
        return False


def socket_in(ns, family=socket.AF_INET, type=socket.SOCK_DGRAM, proto=0):
    """A socket created inside network namespace `ns` (None: the current one)."""
    with netns(ns):
        return socket.socket(family, type, proto)
