"""Addresses on the local stack, shared by `make demo`, the tests and the benchmarks: where pods
reach the host, and a Postgres DSN pointed at another database (and host, for pods)."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit


def host_ip() -> str:
    """The address pods reach the host on (hack/lib.sh host_ip): the source of the default route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(("1.1.1.1", 80))  # UDP connect sends nothing; it only picks the route
        return str(sock.getsockname()[0])


def with_database(dsn: str, database: str, *, host: str | None = None, port: int | None = None) -> str:
    """`dsn` naming `database`; with `host` (and `port`), reached there instead — a pod dials the
    host's bridge address or a Service's ClusterIP, not the loopback the host process uses."""
    parts = urlsplit(dsn)
    netloc = parts.netloc
    if host is not None:
        userinfo, _, hostport = netloc.rpartition("@")
        kept = hostport.rsplit(":", 1)[1] if ":" in hostport else "5432"
        netloc = f"{userinfo}@{host}:{port if port is not None else kept}"
    return urlunsplit((parts.scheme, netloc, f"/{database}", parts.query, parts.fragment))
