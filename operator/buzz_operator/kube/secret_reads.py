"""Secrets read once for as long as their holder lives: one drive of one trial's corridor.

A trial's drive used to read the same Secrets again at every step — its per-try tenant Secret
at launch, run, collect and bundle, the user's model API keys at context load, launch and
bundle — eleven `GET secrets` a trial, each about 2 ms of the operator's CPU
(docs/performance.md#cpu). A drive now reads each Secret once and answers every later step
from what it read. What that means for a Secret that changes mid-drive is deliberate:

* the bundle's secret scan looks for the model keys the seats were launched with, not for
  what the Secret holds by the time the bundle is written (a key rotated mid-trial is the old
  one in the pod's processes and in anything they leaked);
* a read that failed is not kept: a Secret not yet written, or restored after a 404, is read
  again by the next step that asks.

A new drive (the next trial, or this one after an operator restart) starts with nothing kept.
What is kept never prints (`repr` names the Secrets only) and goes with the drive.
"""

from __future__ import annotations

from typing import Protocol

from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube


class SecretRead(Protocol):
    """objects.read_secret's shape: a Secret's data, decoded, or the one key asked for."""

    async def __call__(self, kube: Kube, namespace: str, name: str, *, key: str | None = None
                       ) -> dict[str, str]: ...


class SecretReads:
    """A SecretRead that reads each (namespace, name) through `read` once and keeps it."""

    def __init__(self, read: SecretRead = objects.read_secret) -> None:
        self._read = read
        self._kept: dict[tuple[str, str], dict[str, str]] = {}

    async def __call__(self, kube: Kube, namespace: str, name: str, *, key: str | None = None) -> dict[str, str]:
        data = self._kept.get((namespace, name))
        if data is None:
            data = await self._read(kube, namespace, name)  # raises, and keeps nothing, when it fails
            self._kept[(namespace, name)] = data
        if key is None:
            return dict(data)
        if key not in data:  # as objects.read_secret says it
            raise KeyError(f"Secret {namespace}/{name} has no key {key!r}")
        return {key: data[key]}

    def literals(self) -> list[str]:
        """Every value read: what a failure message must not repeat (api/secret_text.py scrub)."""
        return [value for data in self._kept.values() for value in data.values() if value]

    def __repr__(self) -> str:
        return f"SecretReads({sorted(f'{ns}/{name}' for ns, name in self._kept)})"
