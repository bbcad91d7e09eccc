"""`python -m buzz_operator.dev.relay`: run the development relay until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys

from buzz_operator.dev.relay.config import ConfigError, RelayConfig
from buzz_operator.dev.relay.logjson import configure
from buzz_operator.dev.relay.server import serve

log = logging.getLogger("buzz_operator.dev.relay")

# The relay is configured by the environment names Block's relay reads (config.py), so the
# command line carries nothing but --help; the help must print before the environment is read,
# or asking for it fails with "RELAY_URL: required".
SETTINGS = """environment:
  RELAY_URL               canonical URL, e.g. ws://localhost:3600; its authority is the only accepted Host
  RELAY_OWNER_PUBKEY      x-only hex key whose NIP-OA tags admit identities
  BUZZ_RELAY_PRIVATE_KEY  hex key that signs the 39000/39001/39002 channel state
  DATABASE_URL            Postgres DSN; tables live in schema relay (applied at start)
  BUZZ_BIND               host:port to listen on (default 0.0.0.0:3600)
  BUZZ_TLS_CERT_FILE      PEM certificate (chain) to serve wss:// with; set with BUZZ_TLS_KEY_FILE, or neither
  BUZZ_TLS_KEY_FILE       its PEM private key

A bad setting exits 2 naming the variable; SIGTERM/SIGINT close every connection and exit 0."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m buzz_operator.dev.relay",
        description="The development relay: a Buzz-compatible websocket relay backed by Postgres.",
        epilog=SETTINGS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser.parse_args(argv)


async def _run(config: RelayConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with serve(config):
        await stop.wait()
        log.info("shutting down")


def main(argv: list[str] | None = None) -> int:
    parse_args(argv)
    configure()
    try:
        config = RelayConfig.from_env(os.environ)
    except ConfigError as exc:
        log.error("invalid configuration: %s", exc)
        return 2
    asyncio.run(_run(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
