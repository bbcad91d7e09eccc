"""One error type for every input a sweep or trial reads that is wrong or cannot be read.

It names the spec field to fix (``spec.relay.ownerKeySecretRef``, ``spec.dataset.registry.url``),
so the sweep's Accepted condition and a trial's failure say exactly what to change; a retry
would not make it go away.
"""

from __future__ import annotations


class InputError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
