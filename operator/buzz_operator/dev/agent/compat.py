"""Spellings that keep the stand-in stack running on python3 3.9/3.10 task images.

Ruff targets 3.11 for the operator, where these have shorter forms; those forms break on older
interpreters (asyncio.TimeoutError only became the builtin TimeoutError in 3.11, datetime.UTC
appeared in 3.11), hence the suppressions.
"""

from __future__ import annotations

import asyncio
import datetime

AsyncTimeout = asyncio.TimeoutError
UTC = datetime.timezone.utc  # noqa: UP017
