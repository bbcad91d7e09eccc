"""Test tiers follow the directory a test lives in: tests/unit → unit, tests/integration →
integration, tests/e2e → e2e, tests/faults → faults, tests/harbor → harbor. `make test` runs them all."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default: a wall-clock assertion, which
# a loaded 2-core machine trips (test_agent_log's chunking property, writing a file per example,
# did while a benchmark ran). How fast code runs is a benchmark's figure (test_no_timed_assertions).
settings.register_profile("buzz", deadline=None)
settings.load_profile("buzz")

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
