"""Container-side layout of the agent stack (docs/corridor.md#the-pod, docs/corridor.md#the-pod).

The seed harness uploads its binaries to these paths; the trial pod's `stack` init
container copies them into an emptyDir mounted at REMOTE_ROOT, so every path an agent
sees — and every path written into a bundle — is unchanged.
"""

from __future__ import annotations

REMOTE_ROOT = "/opt/buzz"
REMOTE_BIN = f"{REMOTE_ROOT}/bin"
REMOTE_PROMPTS = f"{REMOTE_ROOT}/prompts"
REMOTE_LOGS = f"{REMOTE_ROOT}/logs"
REMOTE_LIB = f"{REMOTE_ROOT}/lib/x86_64"
REMOTE_EVIDENCE = "/logs/artifacts/buzz-evidence.json"
FORWARDER = f"{REMOTE_BIN}/relay-forwarder"
FORWARDER_LOG = f"{REMOTE_LOGS}/relay-forwarder.log"
REMOTE_CA_BUNDLE = f"{REMOTE_ROOT}/ca-certificates.crt"
SYSTEM_CA_DIR = "/etc/ssl/certs"
SYSTEM_CA_BUNDLE = f"{SYSTEM_CA_DIR}/ca-certificates.crt"

BUZZ_ACP = f"{REMOTE_BIN}/buzz-acp"
BUZZ_AGENT = f"{REMOTE_BIN}/buzz-agent"
BUZZ_DEV_MCP = f"{REMOTE_BIN}/buzz-dev-mcp"
BUZZ_CLI = f"{REMOTE_BIN}/buzz"
GOOSE = f"{REMOTE_BIN}/goose"
CODEX_ACP = f"{REMOTE_BIN}/codex-acp"
CODEX = f"{REMOTE_BIN}/codex"
CODEX_CODE_MODE_HOST = f"{REMOTE_BIN}/codex-code-mode-host"

# The ACP process buzz-acp hosts, by roster `harness` (docs/corridor.md#agent-environment).
HARNESS_COMMANDS: dict[str, str] = {
    "buzz-agent": BUZZ_AGENT,
    "goose": GOOSE,
    "codex": CODEX_ACP,
}


def remote_prompt_path(seat_id: str) -> str:
    """Where a seat's composed system prompt lives in the pod (docs/corridor.md#system-prompt)."""
    return f"{REMOTE_PROMPTS}/{seat_id}.system-prompt.md"


def remote_stdout_log(seat_id: str) -> str:
    return f"{REMOTE_LOGS}/{seat_id}.stdout.log"


def remote_stderr_log(seat_id: str) -> str:
    return f"{REMOTE_LOGS}/{seat_id}.stderr.log"
