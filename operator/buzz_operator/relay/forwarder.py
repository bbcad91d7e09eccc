"""relay-forwarder LISTEN TARGET — a loopback TCP pump (docs/relay-protocol.md#forwarder, `relay_forwarder.rs`).

The relay is Host-header tenant-bound, so agents must dial its canonical authority
(`ws://localhost:3600`) even inside a pod; this pump listens there and carries the bytes to the
relay Service. It is transparent to websockets and HTTP alike. Stdlib only and Python >= 3.9,
because it also ships inside the stand-in stack that runs in arbitrary task images.

Readiness marker on stdout: `forwarding LISTEN -> TARGET`. A busy port is retried (6 attempts,
linear 1 s backoff, docs/relay-protocol.md#forwarder) and reported with the word `AddrInUse`, which the runtime watches for.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import sys
import threading
import time

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


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy one direction until EOF, then half-close the far side so the other direction keeps
    flowing (a client that shuts down its write side still gets the response)."""
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        # A reset on one side ends both directions: shutting both sockets down wakes the
        # other direction's recv, and closing is the connection's owner's job.
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


class Forwarder:
    """Threads, not asyncio: in a trial pod the sidecar starts under a 100m CPU limit, where
    importing asyncio alone (~110 ms of CPU) took over a second of wall time and agents found
    nothing listening yet (bench/trial.py). Two threads per connection; a trial has a handful."""

    def __init__(self, listen: str, target: str) -> None:
        self.listen = listen
        self.target = target
        self.listen_host, self.listen_port = split_address(listen)
        self.target_host, self.target_port = split_address(target)
        self.server: socket.socket | None = None
        self.active = 0
        self._lock = threading.Lock()
        self._closing = False

    def _handle(self, client: socket.socket, peer: object) -> None:
        with self._lock:
            self.active += 1
        try:
            try:
                upstream = socket.create_connection((self.target_host, self.target_port))
            except OSError as exc:
                _log(f"connect {self.target} for {peer} failed: {exc}")
                return
            with upstream:
                back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
                back.start()
                _pump(client, upstream)
                back.join()
        except Exception as exc:  # one connection's failure must never reach the listener
            _log(f"connection {peer} failed: {exc!r}")
        finally:
            with self._lock:
                self.active -= 1
            client.close()

    def _listener(self) -> socket.socket:
        family, kind, proto, _, address = socket.getaddrinfo(
            self.listen_host, self.listen_port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        server = socket.socket(family, kind, proto)
        try:
            # a restarted forwarder must not wait out TIME_WAIT, while a port with a live
            # listener still fails with EADDRINUSE (as asyncio's start_server behaves)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(address)
            server.listen(128)
        except OSError:
            server.close()
            raise
        return server

    def bind(self, attempts: int = BIND_ATTEMPTS, backoff: float = BIND_BACKOFF_S) -> None:
        for attempt in range(1, attempts + 1):
            try:
                self.server = self._listener()
                break
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                if attempt == attempts:
                    raise
                delay = backoff * attempt
                _log(f"bind {self.listen} failed: AddrInUse (attempt {attempt}/{attempts}); "
                     f"retrying in {delay:g}s")
                time.sleep(delay)
        print(f"forwarding {self.listen} -> {self.target}", flush=True)

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.getsockname()[1])

    def serve_forever(self) -> None:
        """Accept until close(); each connection on its own thread."""
        assert self.server is not None
        while True:
            try:
                client, peer = self.server.accept()
            except OSError:
                if self._closing:
                    return
                continue  # a connection that failed before it was accepted (ECONNABORTED)
            threading.Thread(target=self._handle, args=(client, peer), daemon=True).start()

    def start(self) -> threading.Thread:
        """serve_forever on a daemon thread (tests; the command serves on its main thread)."""
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self._closing = True
        if self.server is not None:
            with contextlib.suppress(OSError):
                self.server.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept on Linux
            self.server.close()


def serve(listen: str, target: str) -> None:
    forwarder = Forwarder(listen, target)
    forwarder.bind()
    forwarder.serve_forever()


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
        serve(args[0], args[1])
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        kind = "AddrInUse" if exc.errno == errno.EADDRINUSE else type(exc).__name__
        _log(f"relay-forwarder: {kind}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
