"""The shipped stand-in conditions load, pin their personas correctly and have endpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.condition import (
    EndpointConfig,
    ExperimentManifest,
    check_endpoints,
    find_placeholder_endpoints,
    plan_seats,
    redact_endpoints,
    resolve_api_keys,
    verify_prompts,
)

MANIFESTS = Path(__file__).resolve().parents[3] / "manifests"
STANDIN = ["standin-oracle.yaml", "standin-toplevel.yaml", "standin-naive.yaml", "standin-team.yaml"]


@pytest.mark.parametrize("name", STANDIN)
def test_standin_conditions(name: str) -> None:
    manifest = ExperimentManifest.load(MANIFESTS / name)
    prompts = verify_prompts(manifest, MANIFESTS)
    assert set(prompts) == {entry.id for entry in manifest.roster}
    endpoints = EndpointConfig.load(MANIFESTS / "endpoints" / "standin.json")
    check_endpoints(manifest, endpoints)
    assert manifest.trial_budget.timeout_seconds == 300
    for price in manifest.prices.values():
        assert price.input_per_million_usd > 0
        assert price.output_per_million_usd > 0


def test_standin_shapes() -> None:
    oracle = ExperimentManifest.load(MANIFESTS / "standin-oracle.yaml")
    toplevel = ExperimentManifest.load(MANIFESTS / "standin-toplevel.yaml")
    team = ExperimentManifest.load(MANIFESTS / "standin-team.yaml")
    naive = ExperimentManifest.load(MANIFESTS / "standin-naive.yaml")
    assert naive.is_solo and naive.roster[0].endpoint == "standin/naive"
    assert oracle.is_solo and oracle.roster[0].endpoint == "standin/oracle"
    assert toplevel.is_solo and toplevel.roster[0].endpoint == "standin/toplevel"
    assert [seat.seat_id for seat in plan_seats(team)] == ["lead-1", "worker-1"]
    assert {entry.endpoint for entry in team.roster} == {"standin/team"}
    assert len({oracle.sha256, toplevel.sha256, team.sha256, naive.sha256}) == 4


def test_solo_persona_states_the_done_contract() -> None:
    persona = (MANIFESTS / "personas" / "solo.md").read_text(encoding="utf-8")
    assert "`DONE:`" in persona


def test_standin_endpoint_config() -> None:
    endpoints = EndpointConfig.load(MANIFESTS / "endpoints" / "standin.json")
    assert redact_endpoints(endpoints) == {
        name: {"provider": "standin", "api_key_env": "STANDIN_API_KEY", "env_keys": []}
        for name in ("standin/naive", "standin/oracle", "standin/team", "standin/toplevel")
    }
    assert find_placeholder_endpoints(endpoints) == []
    assert set(resolve_api_keys(endpoints, {"STANDIN_API_KEY": "standin"})) == set(endpoints)


@pytest.mark.parametrize("policy", ["oracle", "toplevel"])
def test_scripted_conditions_run_buzz_agents_openai_provider(policy: str) -> None:
    """The scripted conditions name the scripted model endpoint the way Block's buzz-agent is
    configured for any OpenAI-compatible server: its key variable and base URL, Chat Completions."""
    manifest = ExperimentManifest.load(MANIFESTS / f"scripted-{policy}.yaml")
    assert set(verify_prompts(manifest, MANIFESTS)) == {"solo"}
    endpoints = EndpointConfig.load(MANIFESTS / "endpoints" / "scripted.json")
    check_endpoints(manifest, endpoints)
    endpoint = endpoints[f"scripted/{policy}"]
    assert (endpoint.provider, endpoint.api_key_env) == ("openai", "OPENAI_COMPAT_API_KEY")
    assert endpoint.env["OPENAI_COMPAT_BASE_URL"] == "http://buzz-scripted-model:8091/v1"
    assert endpoint.env["OPENAI_COMPAT_API"] == "chat"
    assert manifest.trial_budget.timeout_seconds == 300 and manifest.prices[f"scripted/{policy}"].input_per_million_usd > 0
    assert find_placeholder_endpoints(endpoints) == []
