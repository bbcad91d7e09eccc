"""Endpoint launch config (docs/condition.md#endpoints): strict parsing, key resolution, redaction, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.condition import (
    ConditionError,
    EndpointConfig,
    EndpointLaunchConfig,
    ExperimentManifest,
    check_endpoints,
    find_placeholder_endpoints,
    redact_endpoints,
    resolve_api_keys,
)

DATABRICKS = {
    "databricks-gpt-5-6-sol": {
        "provider": "databricks_v2",
        "api_key_env": "DATABRICKS_TOKEN",
        "env": {"DATABRICKS_HOST": "https://example-workspace.cloud.databricks.com"},
    },
    "databricks-claude-opus-5": {
        "provider": "databricks_v2",
        "api_key_env": "DATABRICKS_TOKEN",
        "env": {"DATABRICKS_HOST": "https://example-workspace.cloud.databricks.com"},
    },
}
LIVE = {
    "openai/luna": {"provider": "openai", "api_key_env": "OPENAI_COMPAT_API_KEY", "env": {}},
    "anthropic/opus": {
        "provider": "openrouter",
        "api_key_env": "OPENROUTER_API_KEY",
        "env": {"OPENROUTER_PROVIDER_ORDER": "moonshotai/mxfp4", "RUST_LOG": "debug"},
    },
}


def _error(source: object) -> ConditionError:
    with pytest.raises(ConditionError) as caught:
        EndpointConfig.load(source)  # type: ignore[arg-type]
    return caught.value


def test_load_mapping_and_file(tmp_path: Path) -> None:
    path = tmp_path / "live.json"
    path.write_text(json.dumps(LIVE), encoding="utf-8")
    from_file = EndpointConfig.load(path)
    assert from_file.endpoints == EndpointConfig.load(LIVE).endpoints
    assert from_file["openai/luna"] == EndpointLaunchConfig("openai", "OPENAI_COMPAT_API_KEY", {})
    assert sorted(from_file) == ["anthropic/opus", "openai/luna"]
    assert len(from_file) == 2


def test_env_is_optional() -> None:
    config = EndpointConfig.load({"m": {"provider": "openai", "api_key_env": "K"}})
    assert config["m"].env == {}


def test_unknown_key_refused() -> None:
    error = _error({"m": {"provider": "openai", "api_key_env": "K", "base_url": "x"}})
    assert error.field == "m.base_url"
    assert "unknown field" in str(error)


def test_comment_keys_are_not_endpoints() -> None:
    # Every key is an endpoint name, so a "_comment" string is a malformed endpoint.
    assert _error({"_comment": "see README", **LIVE}).field == "_comment"


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"api_key_env": "K"}, "m.provider"),
        ({"provider": "openai"}, "m.api_key_env"),
        ({"provider": "", "api_key_env": "K"}, "m.provider"),
        ({"provider": "openai", "api_key_env": "NOT A NAME"}, "m.api_key_env"),
        ({"provider": "openai", "api_key_env": "K", "env": {"PORT": 8080}}, "m.env.PORT"),
        ({"provider": "openai", "api_key_env": "K", "env": {"BAD-NAME": "x"}}, "m.env"),
    ],
)
def test_bad_entries_name_the_field(entry: dict, field: str) -> None:
    assert _error({"m": entry}).field == field


@pytest.mark.parametrize(
    "variable",
    [
        "BUZZ_RELAY_URL",
        "BUZZ_PRIVATE_KEY",
        "BUZZ_AUTH_TAG",
        "BUZZ_ACP_CHANNELS",
        "BUZZ_ACP_MCP_COMMAND",
        "BUZZ_ACP_AGENT_COMMAND",
    ],
)
def test_identity_overrides_refused(variable: str) -> None:
    error = _error({"m": {"provider": "openai", "api_key_env": "K", "env": {variable: "x"}}})
    assert error.field == "m.env"
    assert f"endpoint env cannot override trial identity: ['{variable}']" in str(error)


def test_bad_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    error = _error(path)
    assert error.source == str(path)
    path.write_text(json.dumps({"m": {"provider": "p", "api_key_env": "K", "x": 1}}), encoding="utf-8")
    assert str(_error(path)).startswith(f"{path}: m.x: ")


def test_redaction_keeps_names_drops_values() -> None:
    redacted = redact_endpoints(EndpointConfig.load({**LIVE, **DATABRICKS}))
    assert redacted == {
        "anthropic/opus": {
            "provider": "openrouter",
            "api_key_env": "OPENROUTER_API_KEY",
            "env_keys": ["OPENROUTER_PROVIDER_ORDER", "RUST_LOG"],
        },
        "databricks-claude-opus-5": {
            "provider": "databricks_v2",
            "api_key_env": "DATABRICKS_TOKEN",
            "env_keys": ["DATABRICKS_HOST"],
        },
        "databricks-gpt-5-6-sol": {
            "provider": "databricks_v2",
            "api_key_env": "DATABRICKS_TOKEN",
            "env_keys": ["DATABRICKS_HOST"],
        },
        "openai/luna": {"provider": "openai", "api_key_env": "OPENAI_COMPAT_API_KEY", "env_keys": []},
    }
    assert list(redacted) == sorted(redacted)
    assert "example-workspace" not in json.dumps(redacted)
    assert "moonshotai" not in json.dumps(redacted)


def test_resolve_api_keys() -> None:
    keys = resolve_api_keys(
        EndpointConfig.load(LIVE), {"OPENAI_COMPAT_API_KEY": "sk-one", "OPENROUTER_API_KEY": "or-two"}
    )
    assert keys == {"anthropic/opus": "or-two", "openai/luna": "sk-one"}


@pytest.mark.parametrize("environ", [{}, {"OPENAI_COMPAT_API_KEY": ""}])
def test_missing_key_names_endpoint_and_variable(environ: dict) -> None:
    with pytest.raises(ConditionError) as caught:
        resolve_api_keys(EndpointConfig.load({"openai/luna": LIVE["openai/luna"]}), environ)
    assert "endpoint 'openai/luna' needs the OPENAI_COMPAT_API_KEY environment variable" in str(caught.value)
    assert "sk-" not in str(caught.value)


def test_check_endpoints(team: dict) -> None:
    manifest = ExperimentManifest.load(team)
    check_endpoints(manifest, EndpointConfig.load(LIVE))
    with pytest.raises(ConditionError) as caught:
        check_endpoints(manifest, EndpointConfig.load({"openai/luna": LIVE["openai/luna"]}))
    assert caught.value.field == "roster.0.endpoint"
    assert "'anthropic/opus'" in str(caught.value)


def test_check_endpoints_also_accepts_plain_mappings(solo: dict) -> None:
    manifest = ExperimentManifest.load(solo)
    check_endpoints(manifest, {"openai/luna": EndpointLaunchConfig("openai", "K")})
    with pytest.raises(ConditionError, match="cannot override trial identity"):
        check_endpoints(
            manifest, {"openai/luna": EndpointLaunchConfig("openai", "K", {"BUZZ_AUTH_TAG": "x"})}
        )


def test_placeholders_found() -> None:
    config = EndpointConfig.load(
        {
            **LIVE,
            **DATABRICKS,
            "local/placeholder-worker": {"provider": "openai", "api_key_env": "K"},
            "m1": {
                "provider": "openai",
                "api_key_env": "K",
                "env": {"OPENAI_COMPAT_BASE_URL": "http://127.0.0.1:8091/v1"},
            },
        }
    )
    assert find_placeholder_endpoints(config) == [
        "databricks-claude-opus-5",
        "databricks-gpt-5-6-sol",
        "local/placeholder-worker",
    ]
    assert find_placeholder_endpoints(EndpointConfig.load(LIVE)) == []


def test_resolve_only_the_endpoints_a_condition_uses() -> None:
    config = EndpointConfig.load(LIVE)
    environ = {"OPENAI_COMPAT_API_KEY": "sk-one"}
    assert resolve_api_keys(config, environ, only=["openai/luna", "openai/luna"]) == {"openai/luna": "sk-one"}
    with pytest.raises(ConditionError, match="OPENROUTER_API_KEY"):
        resolve_api_keys(config, environ)
    with pytest.raises(ConditionError, match="no launch config for endpoint 'x/y'"):
        resolve_api_keys(config, environ, only=["x/y"])
