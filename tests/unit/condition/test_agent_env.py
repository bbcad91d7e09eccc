"""The buzz-acp environment (docs/corridor.md#agent-environment), as full golden dictionaries."""

from __future__ import annotations

import pytest
from buzz_operator.condition import (
    DEFAULT_RUST_LOG,
    ConditionError,
    EndpointLaunchConfig,
    ExperimentManifest,
    agent_env,
    plan_seats,
)
from buzz_operator.condition.agent_env import stack_rust_log, turn_duration_env

SECRET = "9" * 64
AUTH_TAG = '["auth","' + "a" * 64 + '","","' + "b" * 128 + '"]'
CHANNEL = "6f1c2a7e-0000-4000-8000-000000000001"
RELAY = "ws://localhost:3600"
PROMPT = "/opt/buzz/prompts/solo-1.system-prompt.md"
API_KEY = "sk-test-not-a-real-key"

COMMON = {
    "RUST_LOG": "buzz_acp=info,acp::usage=debug,pool::prompt=info,acp::stream=info,acp::tool=info",
    "SSL_CERT_FILE": "/opt/buzz/ca-certificates.crt",
    "BUZZ_RELAY_URL": RELAY,
    "BUZZ_PRIVATE_KEY": SECRET,
    "NOSTR_PRIVATE_KEY": SECRET,
    "BUZZ_AUTH_TAG": AUTH_TAG,
    "BUZZ_ACP_AGENT_ARGS": "",
    "BUZZ_ACP_MCP_COMMAND": "/opt/buzz/bin/buzz-dev-mcp",
    "BUZZ_ACP_CHANNELS": CHANNEL,
    "BUZZ_ACP_SUBSCRIBE": "mentions",
    "BUZZ_ACP_RESPOND_TO": "anyone",
    "BUZZ_ACP_NO_MEMORY": "true",
    "BUZZ_ACP_SYSTEM_PROMPT_FILE": PROMPT,
}


def _env(
    data: dict, endpoint: EndpointLaunchConfig, seat_index: int = 0, **overrides: object
) -> dict[str, str]:
    manifest = ExperimentManifest.load(data)
    return agent_env(
        manifest=manifest,
        seat=plan_seats(manifest)[seat_index],
        endpoint=endpoint,
        relay_url=RELAY,
        secret_key_hex=SECRET,
        auth_tag=AUTH_TAG,
        channel_id=CHANNEL,
        api_key=API_KEY,
        prompt_path=PROMPT,
        **overrides,  # type: ignore[arg-type]
    )


def test_buzz_agent_defaults_golden(solo: dict) -> None:
    endpoint = EndpointLaunchConfig(
        "databricks_v2", "DATABRICKS_TOKEN", {"DATABRICKS_HOST": "https://h.example"}
    )
    assert _env(solo, endpoint) == {
        "BUZZ_ACP_MAX_TURN_DURATION": "600",
        "BUZZ_ACP_IDLE_TIMEOUT": "599",
        "DATABRICKS_HOST": "https://h.example",
        **COMMON,
        "BUZZ_ACP_AGENT_COMMAND": "/opt/buzz/bin/buzz-agent",
        "BUZZ_AGENT_PROVIDER": "databricks_v2",
        "BUZZ_AGENT_MODEL": "openai/luna",
        "BUZZ_AGENT_THINKING_EFFORT": "medium",
        "BUZZ_AGENT_MAX_ROUNDS": "0",
        "BUZZ_AGENT_NO_HINTS": "1",
        "DATABRICKS_TOKEN": API_KEY,
    }


def test_buzz_agent_pinned_golden(solo: dict) -> None:
    solo["roster"][0]["generation"] = {
        "max_output_tokens": 4096,
        "context_window_tokens": 1000000,
        "compact_at_percent": 30,
        "compact_at_tokens": 272000,
        "thinking_effort": "xhigh",
    }
    solo["roster"][0]["budget"] = {"max_calls": 40}
    solo["roster"][0]["include_platform_prompt"] = False
    endpoint = EndpointLaunchConfig("openai", "OPENAI_COMPAT_API_KEY")
    assert _env(solo, endpoint) == {
        "BUZZ_ACP_MAX_TURN_DURATION": "600",
        "BUZZ_ACP_IDLE_TIMEOUT": "599",
        **COMMON,
        "BUZZ_ACP_AGENT_COMMAND": "/opt/buzz/bin/buzz-agent",
        "BUZZ_ACP_NO_BASE_PROMPT": "true",
        "BUZZ_AGENT_PROVIDER": "openai",
        "BUZZ_AGENT_MODEL": "openai/luna",
        "BUZZ_AGENT_THINKING_EFFORT": "xhigh",
        "BUZZ_AGENT_MAX_OUTPUT_TOKENS": "4096",
        "BUZZ_AGENT_MAX_CONTEXT_TOKENS": "1000000",
        "BUZZ_AGENT_HANDOFF_PERCENT": "30",
        "BUZZ_AGENT_HANDOFF_AT_TOKENS": "272000",
        "BUZZ_AGENT_MAX_ROUNDS": "40",
        "BUZZ_AGENT_NO_HINTS": "1",
        "OPENAI_COMPAT_API_KEY": API_KEY,
    }


def test_goose_golden(solo: dict) -> None:
    solo["roster"][0]["harness"] = "goose"
    solo["roster"][0]["generation"] = {
        "thinking_effort": "high",
        "max_output_tokens": 4096,
        "extra": {"goose_system_prompt_mode": "set"},
    }
    endpoint = EndpointLaunchConfig("openai", "OPENAI_COMPAT_API_KEY")
    assert _env(solo, endpoint) == {
        "BUZZ_ACP_MAX_TURN_DURATION": "600",
        "BUZZ_ACP_IDLE_TIMEOUT": "599",
        **COMMON,
        "BUZZ_ACP_AGENT_COMMAND": "/opt/buzz/bin/goose",
        "GOOSE_PROVIDER": "openai",
        "GOOSE_MODEL": "openai/luna",
        "GOOSE_THINKING_EFFORT": "high",
        "OPENAI_API_KEY": API_KEY,
        "BUZZ_ACP_GOOSE_SYSTEM_PROMPT_MODE": "set",
        "OPENAI_COMPAT_API_KEY": API_KEY,
    }


def test_goose_without_prompt_mode_omits_it(solo: dict) -> None:
    solo["roster"][0]["harness"] = "goose"
    env = _env(solo, EndpointLaunchConfig("openai", "K"))
    assert "BUZZ_ACP_GOOSE_SYSTEM_PROMPT_MODE" not in env
    assert env["GOOSE_THINKING_EFFORT"] == "medium"


def test_codex_golden(solo: dict) -> None:
    solo["roster"][0]["harness"] = "codex"
    endpoint = EndpointLaunchConfig("openai", "OPENAI_COMPAT_API_KEY")
    assert _env(solo, endpoint) == {
        "BUZZ_ACP_MAX_TURN_DURATION": "600",
        "BUZZ_ACP_IDLE_TIMEOUT": "599",
        **COMMON,
        "BUZZ_ACP_AGENT_COMMAND": "/opt/buzz/bin/codex-acp",
        "CODEX_PATH": "/opt/buzz/bin/codex",
        "CODEX_API_KEY": API_KEY,
        "OPENAI_API_KEY": API_KEY,
        "DEFAULT_AUTH_REQUEST": '{"methodId":"api-key"}',
        "NO_BROWSER": "1",
        "INITIAL_AGENT_MODE": "agent-full-access",
        "LD_LIBRARY_PATH": "/opt/buzz/lib/x86_64",
        "CODEX_CONFIG": '{"model":"openai/luna","model_reasoning_effort":"medium",'
        '"approval_policy":"never","sandbox_mode":"danger-full-access"}',
        "OPENAI_COMPAT_API_KEY": API_KEY,
    }


def test_rust_log_from_endpoint_is_appended_to(solo: dict) -> None:
    endpoint = EndpointLaunchConfig("openai", "K", {"RUST_LOG": "debug,acp::usage=trace"})
    assert (
        _env(solo, endpoint)["RUST_LOG"]
        == "debug,acp::usage=trace,pool::prompt=info,acp::stream=info,acp::tool=info"
    )


@pytest.mark.parametrize(
    ("configured", "expected"),
    [
        (None, DEFAULT_RUST_LOG),
        ("", DEFAULT_RUST_LOG),
        ("warn", "warn,acp::usage=debug,pool::prompt=info,acp::stream=info,acp::tool=info"),
        (
            "acp::usage=debug,pool::prompt=warn,acp::stream=off,acp::tool=trace",
            "acp::usage=debug,pool::prompt=warn,acp::stream=off,acp::tool=trace",
        ),
    ],
)
def test_stack_rust_log(configured: str | None, expected: str) -> None:
    assert stack_rust_log(configured) == expected


def test_turn_duration_env() -> None:
    assert turn_duration_env(36000) == {
        "BUZZ_ACP_MAX_TURN_DURATION": "36000",
        "BUZZ_ACP_IDLE_TIMEOUT": "35999",
    }
    assert turn_duration_env(0) == {}
    assert turn_duration_env(-5) == {}


def test_endpoint_env_cannot_override_wiring_but_can_add(solo: dict) -> None:
    # SSL_CERT_FILE comes after endpoint env in the merge, so the pod's bundle wins.
    env = _env(solo, EndpointLaunchConfig("openai", "K", {"SSL_CERT_FILE": "/x", "EXTRA": "1"}))
    assert env["SSL_CERT_FILE"] == "/opt/buzz/ca-certificates.crt"
    assert env["EXTRA"] == "1"


def test_identity_override_refused(solo: dict) -> None:
    with pytest.raises(ConditionError, match="cannot override trial identity"):
        _env(solo, EndpointLaunchConfig("openai", "K", {"BUZZ_RELAY_URL": "ws://evil"}))


def test_api_key_under_its_variable_wins_last(solo: dict) -> None:
    env = _env(solo, EndpointLaunchConfig("openai", "OPENAI_API_KEY", {"OPENAI_API_KEY": "stale"}))
    assert env["OPENAI_API_KEY"] == API_KEY


def test_worker_seat_uses_its_own_class(team: dict) -> None:
    team["roster"][1]["budget"] = {"max_calls": 7}
    env = _env(team, EndpointLaunchConfig("openai", "K"), seat_index=2)
    assert env["BUZZ_AGENT_MAX_ROUNDS"] == "7"
    assert env["BUZZ_AGENT_MODEL"] == "openai/luna"


def test_max_agent_rounds_override_and_bounds(solo: dict) -> None:
    assert (
        _env(solo, EndpointLaunchConfig("openai", "K"), max_agent_rounds=300)["BUZZ_AGENT_MAX_ROUNDS"]
        == "300"
    )
    with pytest.raises(ConditionError, match="max_agent_rounds"):
        _env(solo, EndpointLaunchConfig("openai", "K"), max_agent_rounds=-1)


def test_every_value_is_a_string(team: dict) -> None:
    env = _env(team, EndpointLaunchConfig("openai", "K"))
    assert all(isinstance(key, str) and isinstance(value, str) for key, value in env.items())
