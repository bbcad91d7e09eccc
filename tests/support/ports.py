"""A port for a test server to listen on, chosen where the kernel never hands out ports itself.

Binding to port 0 and closing the socket returns a port from the ephemeral range
(`net.ipv4.ip_local_port_range`, 32768–60999 here). Between that close and the test server's
own bind, any outgoing connection on the machine (the kubelet to the apiserver, a client to
Postgres) may be given the same port: CI saw `address already in use` on 127.0.0.1:42815 that
way. Ports below the ephemeral range and below the NodePort range (30000–32767) are only ever
taken by an explicit bind, so a port found free there stays free unless another test server
asks for it — and this module never hands the same one out twice in a process.
"""

from __future__ import annotations

import errno
import os
import random
import socket
import threading

LOW, HIGH = 20000, 29999  # below NodePorts (30000–32767) and the ephemeral range (32768–)
_handed: set[int] = set()
_lock = threading.Lock()
# each test process starts at its own place so two sessions on one machine rarely probe the same ports
_rng = random.Random(os.getpid() ^ int.from_bytes(os.urandom(4), "big"))


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, port))
        except OSError as err:
            if err.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def free_port(address: str = "127.0.0.1") -> int:
    """A port on `address` that nothing listens on now and that this process has not handed out."""
    high = min(HIGH, _ephemeral_low() - 1)
    with _lock:
        for _ in range(2000):
            port = _rng.randint(LOW, high)
            if port in _handed:
                continue
            if _bindable(address, port) and (address == "0.0.0.0" or _bindable("0.0.0.0", port)):
                _handed.add(port)
                return port
    raise RuntimeError(f"no free port in {LOW}–{high} on {address} after 2000 tries")
