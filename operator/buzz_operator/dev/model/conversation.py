"""A conversation in a dialect-neutral form: what the scripted policies read.

Both dialects (OpenAI Chat Completions, Anthropic Messages) are translated into this shape, so
a policy is written once: every prompt the session has been sent (buzz-agent keeps a session's
history across turns, so a later turn's request still holds the earlier turns' prompts, and a
mid-turn steer lands as one more prompt), every tool call the model made, and what each returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class UnsupportedRequest(ValueError):
    """A request the scripted model cannot answer faithfully; the message names what and where."""


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Turn:
    """The whole conversation of one request: its prompts (user messages that are not tool
    results) in order, the last one being the turn's, and every tool call and result."""

    model: str
    prompt: str  # the last prompt
    tools: list[str]
    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)  # call_id → tool output text
    request_chars: int = 0  # size of the request as sent, for the usage the reply reports
    prompts: list[str] = field(default_factory=list)  # every prompt, oldest first

    def __post_init__(self) -> None:
        if not self.prompts:
            self.prompts = [self.prompt]

    def result(self, call_id: str) -> str | None:
        return self.results.get(call_id)

    def shell_tool(self) -> str:
        """The agent's shell tool (`dev__shell` from buzz-dev-mcp, or the stand-in's)."""
        for name in self.tools:
            if name == "shell" or name.endswith("__shell"):
                return name
        raise UnsupportedRequest(
            "tools: the request offers no shell tool (a name ending in `__shell`); the scripted "
            f"model acts through the agent's shell tool, and was offered {sorted(self.tools)}"
        )


@dataclass(frozen=True)
class Reply:
    """What the model answers: tool calls to run, or (no calls) text that ends the turn."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    extra_input_tokens: int = 0  # billed on top of the request's size (the spender policy)
    extra_output_tokens: int = 0
