"""The kubelet's pull Events of one pod, read as figures (pure; docs/warm-pods.md#measured):
`Successfully pulled image "<ref>" in 1.234s (1.3s including waiting). Image size: …` for an image
it pulled and `Container image "<ref>" already present on machine…` for one it had. Go's
duration text: `850ms`, `1.234s`, `2m3.5s`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PULLED = re.compile(r'^Successfully pulled image "(?P<image>[^"]+)" in (?P<took>[0-9hmsµu.]+)')
PRESENT = re.compile(r'^Container image "(?P<image>[^"]+)" already present on machine')
_UNIT = re.compile(r"(?P<n>[0-9.]+)(?P<unit>h|ms|m|s|µs|us|ns)")
_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def go_seconds(text: str) -> float | None:
    """A Go time.Duration's String() in seconds; None when it is not one."""
    parts = list(_UNIT.finditer(text))
    if not parts or "".join(p.group(0) for p in parts) != text:
        return None
    return sum(float(p.group("n")) * _SECONDS[p.group("unit")] for p in parts)


@dataclass(frozen=True)
class Pulls:
    seconds: float  # summed: the kubelet pulls one image at a time by default
    pulled: int
    present: int


def pulls(events: Iterable[Mapping[str, Any]]) -> Pulls:
    """The pod's pulls from its Events (reason Pulled); each image counted once."""
    seconds, pulled, present = 0.0, set(), set()
    for event in events:
        if event.get("reason") != "Pulled":
            continue
        message = str(event.get("message") or "")
        if (found := PULLED.match(message)) and (took := go_seconds(found.group("took"))) is not None:
            if found.group("image") not in pulled:
                seconds += took
            pulled.add(found.group("image"))
        elif found := PRESENT.match(message):
            present.add(found.group("image"))
    return Pulls(round(seconds, 3), len(pulled), len(present - pulled))
