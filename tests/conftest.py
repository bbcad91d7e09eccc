"""Test tiers follow the directory a test lives in: tests/unit → unit, tests/integration →
integration, tests/e2e → e2e, tests/faults → faults, tests/harbor → harbor. `make test` runs them all."""

from __future__ import annotations

from pathlib import Path

import pytest

_TIERS = ("unit", "integration", "e2e", "faults", "harbor")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        for tier in _TIERS:
            if tier in parts:
                item.add_marker(getattr(pytest.mark, tier))
                break
    # tests that tear the local stack down run after everything else in the session
    items.sort(key=lambda item: item.get_closest_marker("teardown") is not None)
