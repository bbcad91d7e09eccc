"""`python -m buzz_operator.dev.relay`: run the development relay until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys

from buzz_operator.dev.relay.config import ConfigError, RelayConfig
from buzz_operator.dev.relay.logjson import configure
from buzz_operator.dev.relay.server import serve

log = logging.getLogger("buzz_operator.dev.relay")


async def _run(config: RelayConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with serve(config):
        await stop.wait()
        log.info("shutting down")


def main() -> int:
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
