"""Token counts the scripted model reports: deterministic, and proportional to the text moved.

A real tokenizer is not needed for the ledger to be tested honestly; what matters is that the
counts are the endpoint's own (the agent only relays them) and grow with what was sent and
returned, so a longer transcript costs more. Four characters a token is the usual rule of thumb.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def tokens(chars: int) -> int:
    return max(1, -(-chars // CHARS_PER_TOKEN))
