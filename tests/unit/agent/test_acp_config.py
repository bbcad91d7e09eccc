"""buzz-acp's configuration comes only from the runtime's environment (docs/corridor.md#agent-environment)."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.dev.agent.acp import main
from buzz_operator.dev.agent.config import AcpConfig, ConfigError
from buzz_operator.dev.agent.nostr import CredentialError

SECRET = "03" * 32


def _env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    prompt = tmp_path / "solo-1.system-prompt.md"
    prompt.write_text("persona\n")
    env = {
        "BUZZ_RELAY_URL": "ws://localhost:3600",
        "BUZZ_PRIVATE_KEY": SECRET,
        "BUZZ_AUTH_TAG": '["auth","' + "ab" * 32 + '","","' + "cd" * 64 + '"]',
        "BUZZ_ACP_CHANNELS": "c1, c2",
        "BUZZ_ACP_SUBSCRIBE": "mentions",
        "BUZZ_ACP_SYSTEM_PROMPT_FILE": str(prompt),
        "BUZZ_AGENT_MODEL": "standin/oracle",
        "BUZZ_ACP_MAX_TURN_DURATION": "300",
        "BUZZ_ACP_IDLE_TIMEOUT": "299",
        "STANDIN_API_KEY": "key-value",
    }
    env.update(overrides)
    return env


def test_runtime_environment(tmp_path: Path) -> None:
    config = AcpConfig.from_env(_env(tmp_path))
    assert config.channels == ["c1", "c2"]
    assert config.policy == "oracle" and config.model == "standin/oracle"
    assert (config.max_turn_s, config.idle_timeout_s) == (300.0, 299.0)
    assert config.system_prompt == "persona\n"
    assert config.mentions_only is True
    assert (config.api_key_env, config.api_key) == ("STANDIN_API_KEY", "key-value")
    assert config.auth_tag is not None and config.auth_tag[0] == "auth"
    assert config.handoff_at == 272_000  # buzz-agent's ceiling when the condition pins nothing


def test_defaults_and_handoff_settings(tmp_path: Path) -> None:
    env = _env(tmp_path, BUZZ_AGENT_MAX_CONTEXT_TOKENS="200000", BUZZ_AGENT_HANDOFF_PERCENT="30")
    for name in ("BUZZ_ACP_MAX_TURN_DURATION", "BUZZ_ACP_IDLE_TIMEOUT"):
        del env[name]
    config = AcpConfig.from_env(env)
    assert (config.max_turn_s, config.idle_timeout_s) == (7200.0, 900.0)
    assert config.handoff_at == 60_000


@pytest.mark.parametrize(("overrides", "error"), [
    ({"BUZZ_AGENT_MODEL": ""}, ConfigError),
    ({"BUZZ_ACP_MAX_TURN_DURATION": "soon"}, ConfigError),
    ({"BUZZ_AGENT_HANDOFF_PERCENT": "ninety"}, ConfigError),
    ({"BUZZ_ACP_SYSTEM_PROMPT_FILE": "/nonexistent/prompt.md"}, ConfigError),
    ({"BUZZ_PRIVATE_KEY": "zz"}, CredentialError),
    ({"BUZZ_AUTH_TAG": "[1,2]"}, CredentialError),
])
def test_bad_environment(tmp_path: Path, overrides: dict[str, str], error: type[Exception]) -> None:
    with pytest.raises(error):
        AcpConfig.from_env(_env(tmp_path, **overrides))


def test_unknown_policy_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in _env(tmp_path, BUZZ_AGENT_MODEL="standin/clairvoyant").items():
        monkeypatch.setenv(name, value)
    assert main([]) == 2
    assert "unknown stand-in policy 'clairvoyant'" in capsys.readouterr().err


def test_a_real_provider_moves_the_model_to_its_endpoint(tmp_path: Path) -> None:
    config = AcpConfig.from_env(_env(tmp_path, BUZZ_AGENT_PROVIDER="openai", BUZZ_AGENT_MODEL="scripted/oracle",
                                     OPENAI_COMPAT_API_KEY="sk-1", BUZZ_STANDIN_BIN_DIR="/opt/buzz/bin"))
    assert config.provider == "openai" and config.bin_dir == "/opt/buzz/bin"
    assert (config.api_key_env, config.api_key) == ("OPENAI_COMPAT_API_KEY", "sk-1")  # where buzz-agent reads it


def test_an_endpoint_it_cannot_call_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in _env(tmp_path, BUZZ_AGENT_PROVIDER="openai", BUZZ_AGENT_MODEL="scripted/oracle",
                            OPENAI_COMPAT_BASE_URL="http://model:8091/v1").items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("OPENAI_COMPAT_API_KEY", raising=False)
    assert main([]) == 2
    assert "OPENAI_COMPAT_API_KEY required for BUZZ_AGENT_PROVIDER=openai" in capsys.readouterr().err
