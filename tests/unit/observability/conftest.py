from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def trial_body(
    name: str, status: dict[str, Any], *, sweep: str = "s1", namespace: str = "ns"
) -> dict[str, Any]:
    return {
        "apiVersion": "bench.buzz.dev/v1alpha1",
        "kind": "BuzzTrial",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "sweepName": sweep,
            "task": "hello-file",
            "attempt": 1,
            "conditionHash": "ab" * 32,
            "endpoints": ["standin"],
        },
        "status": status,
    }


@pytest.fixture
def body() -> Any:
    return trial_body
