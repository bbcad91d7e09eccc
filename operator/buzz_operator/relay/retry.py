"""Write retry policy of the seed's CLI wrapper (docs/relay-protocol.md#auth): up to 7 attempts, exponential backoff
capped at 32 s, a relay hint `retry in Ns` honoured as a floor, jitter ×1.0–1.5. Only
rejections the relay marks as transient are retried."""

from __future__ import annotations

import random
import re

MAX_ATTEMPTS = 7
MAX_DELAY_S = 32.0
_HINT = re.compile(r"retry in (\d+)s")


def is_retryable(message: str) -> bool:
    """Same test as the seed: spaces removed, lowercased, `"retryable":true` or `rate-limited`."""
    squashed = message.replace(" ", "").lower()
    return '"retryable":true' in squashed or "rate-limited" in squashed or "retryable:" in squashed


def retry_delay(attempt: int, message: str, rng: random.Random | None = None) -> float:
    """Delay before attempt `attempt + 1` (attempt counts from 1)."""
    base = min(1.0 * 2 ** (attempt - 1), MAX_DELAY_S)
    match = _HINT.search(message)
    hint = float(match.group(1)) if match else 0.0
    return max(base, hint) * (rng or random).uniform(1.0, 1.5)
