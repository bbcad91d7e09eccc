"""Fixtures for the ledger tests: a real team manifest and its planned seats."""

from __future__ import annotations

import pytest
from buzz_operator.condition import ExperimentManifest, plan_seats

from .builders import manifest_data


@pytest.fixture
def manifest() -> ExperimentManifest:
    return ExperimentManifest.load(manifest_data())


@pytest.fixture
def seats(manifest: ExperimentManifest) -> list:
    return plan_seats(manifest)
