"""buzz-acp's configuration, read only from the environment the runtime sets (docs/corridor.md#agent-environment)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from .nostr import Keys, parse_auth_tag
from .usage import handoff_threshold

DEFAULT_MAX_TURN_S = 7200.0  # buzz-acp's own defaults when the runtime sets none (docs/corridor.md#agent-environment)
DEFAULT_IDLE_S = 900.0
DEFAULT_HANG_S = 30.0
_PROVIDER_KEYS = {"openai": "OPENAI_COMPAT_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class ConfigError(ValueError):
    """A required variable is missing or malformed."""


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a number of seconds, got {raw!r}") from exc


@dataclass(frozen=True)
class AcpConfig:
    relay_url: str
    keys: Keys
    auth_tag: list[str] | None
    channels: list[str]
    mentions_only: bool
    system_prompt: str
    model: str
    policy: str
    max_turn_s: float
    idle_timeout_s: float
    handoff_at: int | None
    api_key_env: str
    api_key: str
    rust_log: str | None
    app_dir: str
    hang_s: float
    provider: str = "standin"  # BUZZ_AGENT_PROVIDER: where the model lives (endpoint.py)
    bin_dir: str = ""  # the stack's bin directory, first on a shell tool's PATH

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AcpConfig:
        env = os.environ if env is None else env
        missing = [name for name in ("BUZZ_RELAY_URL", "BUZZ_PRIVATE_KEY", "BUZZ_ACP_CHANNELS",
                                     "BUZZ_AGENT_MODEL") if not env.get(name, "").strip()]
        if missing:
            raise ConfigError(f"missing environment: {', '.join(missing)}")
        model = env["BUZZ_AGENT_MODEL"].strip()
        prefix, _, policy = model.partition("/")
        provider = env.get("BUZZ_AGENT_PROVIDER", "").strip() or "standin"
        prompt_file = env.get("BUZZ_ACP_SYSTEM_PROMPT_FILE", "")
        prompt = ""
        if prompt_file:
            try:
                with open(prompt_file, encoding="utf-8") as handle:
                    prompt = handle.read()
            except OSError as exc:
                raise ConfigError(f"cannot read BUZZ_ACP_SYSTEM_PROMPT_FILE: {exc}") from exc
        # The endpoint's api_key_env is not passed by name. A real provider's key is where
        # buzz-agent reads it; the stand-in's endpoints follow the `<PREFIX>_API_KEY` convention
        # (e.g. STANDIN_API_KEY), overridable for other configs.
        api_key_env = env.get("BUZZ_STANDIN_API_KEY_ENV") or _PROVIDER_KEYS.get(
            provider, f"{(prefix or 'standin').upper()}_API_KEY")
        try:
            handoff_at = handoff_threshold(env.get("BUZZ_AGENT_HANDOFF_PERCENT"),
                                           env.get("BUZZ_AGENT_MAX_CONTEXT_TOKENS"),
                                           env.get("BUZZ_AGENT_HANDOFF_AT_TOKENS"))
        except ValueError as exc:
            raise ConfigError(f"handoff settings must be integers: {exc}") from exc
        return cls(
            relay_url=env["BUZZ_RELAY_URL"].strip(),
            keys=Keys.from_text(env["BUZZ_PRIVATE_KEY"]),
            auth_tag=parse_auth_tag(env.get("BUZZ_AUTH_TAG")),
            channels=[c.strip() for c in env["BUZZ_ACP_CHANNELS"].split(",") if c.strip()],
            mentions_only=env.get("BUZZ_ACP_SUBSCRIBE", "mentions").strip() == "mentions",
            system_prompt=prompt,
            model=model,
            policy=policy or prefix,
            max_turn_s=_seconds(env, "BUZZ_ACP_MAX_TURN_DURATION", DEFAULT_MAX_TURN_S),
            idle_timeout_s=_seconds(env, "BUZZ_ACP_IDLE_TIMEOUT", DEFAULT_IDLE_S),
            handoff_at=handoff_at,
            api_key_env=api_key_env,
            api_key=env.get(api_key_env, ""),
            rust_log=env.get("RUST_LOG"),
            app_dir=env.get("BUZZ_STANDIN_APP_DIR", "/app"),
            hang_s=_seconds(env, "BUZZ_STANDIN_HANG_SECONDS", DEFAULT_HANG_S),
            provider=provider,
            # the zipapp's own directory: /opt/buzz/bin in a pod, where `buzz` sits beside it
            bin_dir=env.get("BUZZ_STANDIN_BIN_DIR") or os.path.dirname(os.path.abspath(sys.argv[0])),
        )
