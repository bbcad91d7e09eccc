"""Shared builders for condition tests: small valid manifests as plain mappings."""

from __future__ import annotations

import copy
from typing import Any

import pytest

DIGEST = "ab" * 32


def solo_manifest() -> dict[str, Any]:
    return {
        "condition": "solo-test",
        "roster": [
            {
                "id": "solo",
                "kind": "orchestrator",
                "role": "solo",
                "count": 1,
                "endpoint": "openai/luna",
                "model_revision": "luna-1",
                "prompt": {"path": "personas/solo.md", "sha256": DIGEST},
            }
        ],
        "prices": {
            "openai/luna": {
                "input_per_million_usd": 0.2,
                "cached_input_per_million_usd": 0.02,
                "output_per_million_usd": 1.2,
            }
        },
        "trial_budget": {"timeout_seconds": 600},
    }


def team_manifest() -> dict[str, Any]:
    data = solo_manifest()
    data["condition"] = "team-test"
    data["roster"] = [
        {
            "id": "lead",
            "kind": "orchestrator",
            "role": "lead",
            "count": 1,
            "endpoint": "anthropic/opus",
            "model_revision": "opus-5",
            "prompt": {"path": "personas/lead.md", "sha256": DIGEST},
        },
        {
            "id": "worker",
            "kind": "worker",
            "role": "implementer",
            "count": 2,
            "endpoint": "openai/luna",
            "model_revision": "luna-1",
            "prompt": {"path": "personas/worker.md", "sha256": DIGEST},
        },
        {
            "id": "critic",
            "kind": "worker",
            "role": "critic",
            "count": 1,
            "endpoint": "openai/luna",
            "model_revision": "luna-1",
            "prompt": {"path": "personas/worker.md", "sha256": DIGEST},
        },
    ]
    data["prices"]["anthropic/opus"] = {
        "input_per_million_usd": 5,
        "cached_input_per_million_usd": 0.5,
        "output_per_million_usd": 25,
    }
    return data


@pytest.fixture
def solo() -> dict[str, Any]:
    return copy.deepcopy(solo_manifest())


@pytest.fixture
def team() -> dict[str, Any]:
    return copy.deepcopy(team_manifest())
