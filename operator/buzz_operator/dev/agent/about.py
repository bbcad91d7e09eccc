"""`buzz-agent` and `buzz-dev-mcp` (stand-ins). The stand-in folds the model and its tools into
buzz-acp, but the stack keeps the real layout (/opt/buzz/bin/{buzz-acp,buzz-agent,buzz-dev-mcp})
so the runtime's env (BUZZ_ACP_AGENT_COMMAND, BUZZ_ACP_MCP_COMMAND) points at real files."""

from __future__ import annotations

import sys

_ROLES = {
    "buzz-agent": "the model loop; the stand-in runs it inside buzz-acp (a folded-in policy, or a model "
                  "endpoint when BUZZ_AGENT_PROVIDER is openai or anthropic)",
    "buzz-dev-mcp": "the MCP toolset; the stand-in acts through buzz-acp's own relay session, or runs an "
                    "endpoint's shell calls itself",
}


def describe(name: str) -> str:
    return f"{name} (buzz-operator stand-in): {_ROLES[name]}"


def agent_main() -> int:
    print(describe("buzz-agent"))
    return 0


def mcp_main() -> int:
    print(describe("buzz-dev-mcp"))
    return 0


if __name__ == "__main__":
    sys.exit(agent_main())
