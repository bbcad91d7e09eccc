"""The test servers' ports come from below the ephemeral range, so an outgoing connection can
never be handed one between its choice and the server's bind (tests/support/ports.py)."""

from __future__ import annotations

import contextlib
import socket

import pytest

from tests.support import ports
from tests.support.ports import LOW, _ephemeral_low, free_port


def test_ports_are_below_the_ephemeral_range_distinct_and_free() -> None:
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
    assert all(LOW <= p < min(30000, _ephemeral_low()) for p in ports)
    for port in ports[:20]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_a_port_someone_listens_on_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    low = free_port()  # a window of ten ports; half of them taken by listeners this module never handed out
    window = range(low, low + 10)
    monkeypatch.setattr(ports, "LOW", low)
    monkeypatch.setattr(ports, "HIGH", low + 9)
    monkeypatch.setattr(ports, "_handed", set())
    held = []
    try:
        for port in window[::2]:
            with contextlib.suppress(OSError):
                held.append(socket.create_server(("127.0.0.1", port)))
        taken = {s.getsockname()[1] for s in held}
        free = set(window) - taken
        handed = {free_port() for _ in free}
        assert handed <= free and not handed & taken
        with pytest.raises(RuntimeError, match="no free port"):
            free_port()
    finally:
        for sock in held:
            sock.close()
