"""relay-forwarder LISTEN TARGET — a loopback TCP pump (docs/relay-protocol.md#forwarder, `relay_forwarder.rs`).

The relay is Host-header tenant-bound, so agents must dial its canonical authority
(`ws://localhost:3600`) even inside a pod; this pump listens there and carries the bytes to the
relay Service. It is transparent to websockets and HTTP alike. Stdlib only and Python >= 3.9,
because it also ships inside the stand-in stack that runs in arbitrary task images.

Readiness marker on stdout: `forwarding LISTEN -> TARGET`. A busy port is retried (6 attempts,
linear 1 s backoff, docs/relay-protocol.md#forwarder) and reported with the word `AddrInUse`, which the runtime watches for.
"""

from __future__ import annotations

import asyncio
import errno
import sys

BIND_ATTEMPTS = 6
BIND_BACKOFF_S = 1.0
CHUNK = 16 * 1024
USAGE = "usage: relay-forwarder <listen-addr> <target-addr>"
HELP = """Listen on <listen-addr> (host:port or [v6]:port) inside the trial pod and pump every
connection's bytes to <target-addr>, the relay Service's ClusterIP:port, unchanged: the relay
binds tenants to the Host its clients present, so the forwarder never rewrites it."""


def split_address(text: str) -> tuple[str, int]:
    """`host:port` or `[v6]:port` → (host, port); ValueError when malformed. Port 0 binds an
    ephemeral port (tests read it back from `Forwarder.port`)."""
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"bad address {text!r}: expected host:port")
    return host, int(port)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction until EOF, then half-close the far side so the other direction keeps
    flowing (a client that shuts down its write side still gets the response)."""
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        # A reset on one side ends both directions; closing is the caller's job.
        writer.close()


class Forwarder:
    def __init__(self, listen: str, target: str) -> None:
        self.listen = listen
        self.target = target
        self.listen_host, self.listen_port = split_address(listen)
        self.target_host, self.target_port = split_address(target)
        self.server: asyncio.AbstractServer | None = None
        self.active = 0

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        peer = client_writer.get_extra_info("peername")
        self.active += 1
        try:
            try:
                upstream_reader, upstream_writer = await asyncio.open_connection(
                    self.target_host, self.target_port)
            except OSError as exc:
                _log(f"connect {self.target} for {peer} failed: {exc}")
                return
            try:
                await asyncio.gather(_pump(client_reader, upstream_writer),
                                     _pump(upstream_reader, client_writer))
            finally:
                upstream_writer.close()
        except Exception as exc:  # one connection's failure must never reach the listener
            _log(f"connection {peer} failed: {exc!r}")
        finally:
            self.active -= 1
            client_writer.close()

    async def bind(self, attempts: int = BIND_ATTEMPTS, backoff: float = BIND_BACKOFF_S) -> None:
        for attempt in range(1, attempts + 1):
            try:
                # asyncio sets SO_REUSEADDR: a restarted forwarder must not wait out TIME_WAIT,
                # while a port with a live listener still fails with EADDRINUSE below.
                self.server = await asyncio.start_server(self._handle, self.listen_host, self.listen_port)
                break
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                if attempt == attempts:
                    raise
                delay = backoff * attempt
                _log(f"bind {self.listen} failed: AddrInUse (attempt {attempt}/{attempts}); "
                     f"retrying in {delay:g}s")
                await asyncio.sleep(delay)
        print(f"forwarding {self.listen} -> {self.target}", flush=True)

    @property
    def port(self) -> int:
        assert self.server is not None and self.server.sockets
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def serve(listen: str, target: str) -> None:
    forwarder = Forwarder(listen, target)
    await forwarder.bind()
    assert forwarder.server is not None
    async with forwarder.server:
        await forwarder.server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["-h"], ["--help"]):
        print(f"{USAGE}\n\n{HELP}")
        return 0
    if len(args) != 2:
        _log(USAGE)
        return 2
    try:
        split_address(args[0])
        split_address(args[1])
    except ValueError as exc:
        _log(f"{exc}\n{USAGE}")
        return 2
    try:
        asyncio.run(serve(args[0], args[1]))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        kind = "AddrInUse" if exc.errno == errno.EADDRINUSE else type(exc).__name__
        _log(f"relay-forwarder: {kind}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
