"""Buzz-compatible development relay (websockets + asyncpg); see server.py."""

from buzz_operator.dev.relay.config import ConfigError, RelayConfig
from buzz_operator.dev.relay.server import serve

__all__ = ["ConfigError", "RelayConfig", "serve"]
