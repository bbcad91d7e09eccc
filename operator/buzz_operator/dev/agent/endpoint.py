"""Where the stand-in's model lives when it is not folded in: an HTTP model endpoint, configured
from the same variables Block's buzz-agent reads (crates/buzz-agent/src/config.rs).

`BUZZ_AGENT_PROVIDER=openai` speaks Chat Completions to `{OPENAI_COMPAT_BASE_URL}/chat/completions`
with `Authorization: Bearer {OPENAI_COMPAT_API_KEY}`; `anthropic` speaks Messages to
`{ANTHROPIC_BASE_URL}/v1/messages` with `x-api-key`. The model sent is `BUZZ_AGENT_MODEL`, as
buzz-agent sends it. Any other provider (`standin`) keeps the model in-process (policies.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from .config import ConfigError

REMOTE_PROVIDERS = ("openai", "anthropic")
DEFAULT_MAX_OUTPUT_TOKENS = 65_536  # buzz-agent's defaults (config.rs)
DEFAULT_ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_LLM_TIMEOUT_S = 240.0
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


def is_remote(provider: str) -> bool:
    return provider in REMOTE_PROVIDERS


@dataclass(frozen=True)
class EndpointSettings:
    provider: str
    model: str
    base_url: str
    api_key: str
    anthropic_version: str
    max_output_tokens: int
    max_rounds: int  # model calls per turn; 0 = unbounded (BUZZ_AGENT_MAX_ROUNDS)
    timeout_s: float
    effort: str | None = None  # sent as Chat Completions `reasoning_effort`

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return f"{base}/v1/messages" if self.provider == "anthropic" else f"{base}/chat/completions"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> EndpointSettings:
        provider = env.get("BUZZ_AGENT_PROVIDER", "").strip()
        if not is_remote(provider):
            raise ConfigError(f"BUZZ_AGENT_PROVIDER={provider!r} names no model endpoint "
                              f"(the stand-in calls one for {', '.join(REMOTE_PROVIDERS)})")
        if provider == "anthropic":
            key_name, url_name, default_url = "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com"
        else:
            key_name, url_name, default_url = "OPENAI_COMPAT_API_KEY", "OPENAI_COMPAT_BASE_URL", "https://api.openai.com/v1"
            # Only Chat Completions is spoken: `responses` (and `auto`, which picks Responses for
            # api.openai.com) would be a different wire format, so it is refused, not faked.
            api = env.get("OPENAI_COMPAT_API", "").strip() or "auto"
            host = urlsplit(env.get(url_name, "").strip() or default_url).hostname or ""
            if api == "responses" or (api == "auto" and (host == "openai.com" or host.endswith(".openai.com"))):
                raise ConfigError(f"OPENAI_COMPAT_API={api} selects the Responses API, which the stand-in "
                                  "does not speak; use OPENAI_COMPAT_API=chat")
            if api not in ("auto", "chat"):
                raise ConfigError(f"OPENAI_COMPAT_API={api} not supported (use auto|chat)")
        api_key = env.get(key_name, "").strip()
        if not api_key:
            raise ConfigError(f"{key_name} required for BUZZ_AGENT_PROVIDER={provider}")
        model = env.get("BUZZ_AGENT_MODEL", "").strip()
        base_url = env.get(url_name, "").strip() or default_url
        if urlsplit(base_url).scheme not in ("http", "https"):
            raise ConfigError(f"{url_name} must be an http(s) URL, got {base_url!r}")
        try:
            max_output = int(env.get("BUZZ_AGENT_MAX_OUTPUT_TOKENS") or DEFAULT_MAX_OUTPUT_TOKENS)
            max_rounds = int(env.get("BUZZ_AGENT_MAX_ROUNDS") or 0)
            timeout_s = float(env.get("BUZZ_AGENT_LLM_TIMEOUT_SECS") or DEFAULT_LLM_TIMEOUT_S)
        except ValueError as exc:
            raise ConfigError(f"model endpoint settings must be numbers: {exc}") from exc
        effort = env.get("BUZZ_AGENT_THINKING_EFFORT", "").strip().lower() or None
        if effort is not None and effort not in EFFORTS:
            raise ConfigError(f"BUZZ_AGENT_THINKING_EFFORT={effort} not supported (use {'|'.join(EFFORTS)})")
        return cls(provider=provider, model=model, base_url=base_url, api_key=api_key,
                   anthropic_version=env.get("ANTHROPIC_API_VERSION") or DEFAULT_ANTHROPIC_VERSION,
                   max_output_tokens=max_output, max_rounds=max(0, max_rounds), timeout_s=timeout_s,
                   effort=effort)
