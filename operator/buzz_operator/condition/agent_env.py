"""The environment of one seat's ``buzz-acp`` process (docs/corridor.md#agent-environment items 1–9).

Merge order is the seed's, later entries winning: turn duration, endpoint env, RUST_LOG,
SSL_CERT_FILE, relay identity, buzz-acp wiring, the platform-prompt opt-out, harness env,
and finally the API key under the endpoint's ``api_key_env``. Variables for settings the
condition does not pin are omitted, so a variable present in a bundle means the
experiment chose it.
"""

from __future__ import annotations

import json

from buzz_operator.condition.endpoints import EndpointLaunchConfig, reject_identity_overrides
from buzz_operator.condition.errors import ConditionError
from buzz_operator.condition.manifest import AgentClass, ExperimentManifest, GenerationConfig
from buzz_operator.condition.paths import (
    BUZZ_DEV_MCP,
    CODEX,
    HARNESS_COMMANDS,
    REMOTE_CA_BUNDLE,
    REMOTE_LIB,
)
from buzz_operator.condition.seats import Seat

# Effort for seats whose condition does not pin one (docs/corridor.md#agent-environment THINKING_EFFORT).
THINKING_EFFORT = "medium"
# 0 = unbounded rounds per turn (docs/corridor.md#agent-environment DEFAULT_MAX_AGENT_ROUNDS): a cap a solo agent could
# hit in its single turn would handicap the baseline for a reason unrelated to the task.
DEFAULT_MAX_AGENT_ROUNDS = 0

USAGE_LOG_TARGET = "acp::usage"
TURN_LOG_TARGET = "pool::prompt"
STREAM_LOG_TARGET = "acp::stream"
TOOL_LOG_TARGET = "acp::tool"
# The ledger reads token usage and turn ends from these targets; without them a trial
# looks free rather than broken.
_REQUIRED_LOG_DIRECTIVES = (
    (USAGE_LOG_TARGET, "debug"),
    (TURN_LOG_TARGET, "info"),
    (STREAM_LOG_TARGET, "info"),
    (TOOL_LOG_TARGET, "info"),
)
DEFAULT_RUST_LOG = ",".join(
    ["buzz_acp=info", *(f"{target}={level}" for target, level in _REQUIRED_LOG_DIRECTIVES)]
)


def turn_duration_env(timeout_seconds: int) -> dict[str, str]:
    """One turn may last the whole trial; idle one second less (buzz-acp needs idle < max).

    Omitted when no budget is known, so buzz-acp's own defaults apply (2 h / 900 s).
    """
    if timeout_seconds <= 0:
        return {}
    return {
        "BUZZ_ACP_MAX_TURN_DURATION": str(timeout_seconds),
        "BUZZ_ACP_IDLE_TIMEOUT": str(timeout_seconds - 1),
    }


def stack_rust_log(configured: str | None) -> str:
    """The endpoint's RUST_LOG with each required target appended unless already named."""
    if not configured:
        return DEFAULT_RUST_LOG
    directives = [configured]
    directives += [
        f"{target}={level}" for target, level in _REQUIRED_LOG_DIRECTIVES if target not in configured
    ]
    return ",".join(directives)


def window_env(generation: GenerationConfig) -> dict[str, str]:
    env: dict[str, str] = {}
    if generation.max_output_tokens is not None:
        env["BUZZ_AGENT_MAX_OUTPUT_TOKENS"] = str(generation.max_output_tokens)
    if generation.context_window_tokens is not None:
        env["BUZZ_AGENT_MAX_CONTEXT_TOKENS"] = str(generation.context_window_tokens)
    return env


def compaction_env(generation: GenerationConfig) -> dict[str, str]:
    env: dict[str, str] = {}
    if generation.compact_at_percent is not None:
        env["BUZZ_AGENT_HANDOFF_PERCENT"] = str(generation.compact_at_percent)
    if generation.compact_at_tokens is not None:
        env["BUZZ_AGENT_HANDOFF_AT_TOKENS"] = str(generation.compact_at_tokens)
    return env


def _harness_env(
    agent_class: AgentClass,
    *,
    model: str,
    endpoint: EndpointLaunchConfig,
    api_key: str,
    max_agent_rounds: int,
) -> dict[str, str]:
    generation = agent_class.generation
    effort = generation.thinking_effort or THINKING_EFFORT
    if agent_class.harness == "goose":
        env = {
            "GOOSE_PROVIDER": endpoint.provider,
            "GOOSE_MODEL": model,
            "GOOSE_THINKING_EFFORT": effort,
            "OPENAI_API_KEY": api_key,
        }
        mode = generation.extra.get("goose_system_prompt_mode")
        if mode is not None:
            env["BUZZ_ACP_GOOSE_SYSTEM_PROMPT_MODE"] = str(mode)
        return env
    if agent_class.harness == "codex":
        return {
            "CODEX_PATH": CODEX,
            "CODEX_API_KEY": api_key,
            "OPENAI_API_KEY": api_key,
            # A headless run has no UI to answer the ACP auth request, so pre-select it.
            "DEFAULT_AUTH_REQUEST": '{"methodId":"api-key"}',
            "NO_BROWSER": "1",
            "INITIAL_AGENT_MODE": "agent-full-access",
            "LD_LIBRARY_PATH": REMOTE_LIB,
            "CODEX_CONFIG": json.dumps(
                {
                    "model": model,
                    "model_reasoning_effort": effort,
                    "approval_policy": "never",
                    "sandbox_mode": "danger-full-access",
                },
                separators=(",", ":"),
            ),
        }
    return {
        "BUZZ_AGENT_PROVIDER": endpoint.provider,
        "BUZZ_AGENT_MODEL": model,
        "BUZZ_AGENT_THINKING_EFFORT": effort,
        **window_env(generation),
        **compaction_env(generation),
        "BUZZ_AGENT_MAX_ROUNDS": str(agent_class.budget.max_calls or max_agent_rounds),
        "BUZZ_AGENT_NO_HINTS": "1",
    }


def agent_env(
    *,
    manifest: ExperimentManifest,
    seat: Seat,
    endpoint: EndpointLaunchConfig,
    relay_url: str,
    secret_key_hex: str,
    auth_tag: str,
    channel_id: str,
    api_key: str,
    prompt_path: str,
    max_agent_rounds: int = DEFAULT_MAX_AGENT_ROUNDS,
) -> dict[str, str]:
    """Every variable ``buzz-acp`` is launched with for ``seat``.

    ``relay_url`` is the relay as the agent dials it (its canonical RELAY_URL authority);
    ``prompt_path`` is the composed prompt's path inside the pod.
    """
    if max_agent_rounds < 0:
        raise ConditionError("max_agent_rounds must be >= 0 (0 = unbounded)")
    reject_identity_overrides(seat.endpoint, endpoint)
    agent_class = manifest.roster_class(seat.class_id)
    platform_prompt = {} if agent_class.include_platform_prompt else {"BUZZ_ACP_NO_BASE_PROMPT": "true"}
    return {
        **turn_duration_env(manifest.trial_budget.timeout_seconds),
        **endpoint.env,
        "RUST_LOG": stack_rust_log(endpoint.env.get("RUST_LOG")),
        # SSL_CERT_DIR stays unset: rustls-native-certs fails on any bad entry in it.
        "SSL_CERT_FILE": REMOTE_CA_BUNDLE,
        "BUZZ_RELAY_URL": relay_url,
        "BUZZ_PRIVATE_KEY": secret_key_hex,
        # buzz-dev-mcp's git signing shim reads this name (desktop parity).
        "NOSTR_PRIVATE_KEY": secret_key_hex,
        "BUZZ_AUTH_TAG": auth_tag,
        "BUZZ_ACP_AGENT_COMMAND": HARNESS_COMMANDS[agent_class.harness],
        "BUZZ_ACP_AGENT_ARGS": "",
        "BUZZ_ACP_MCP_COMMAND": BUZZ_DEV_MCP,
        "BUZZ_ACP_CHANNELS": channel_id,
        "BUZZ_ACP_SUBSCRIBE": "mentions",
        "BUZZ_ACP_RESPOND_TO": "anyone",
        "BUZZ_ACP_NO_MEMORY": "true",
        "BUZZ_ACP_SYSTEM_PROMPT_FILE": prompt_path,
        **platform_prompt,
        **_harness_env(
            agent_class,
            model=seat.endpoint,
            endpoint=endpoint,
            api_key=api_key,
            max_agent_rounds=max_agent_rounds,
        ),
        endpoint.api_key_env: api_key,
    }
