"""What a seat learns about itself from its composed system prompt (docs/corridor.md#system-prompt "## Your team" block):
its own name, the user it reports to, and its teammates. A real model reads the same text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SELF = re.compile(r"You are `([^`]+)` \(pubkey `([0-9a-f]{64})`\)")
_USER = re.compile(r"Tasks come from the user `([^`]+)` \(pubkey `([0-9a-f]{64})`\)")
_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*`([0-9a-f]{64})`\s*\|\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Teammate:
    name: str
    role: str
    pubkey: str


@dataclass(frozen=True)
class Team:
    name: str = ""
    pubkey: str = ""
    user_name: str = ""
    user_pubkey: str = ""
    teammates: list[Teammate] = field(default_factory=list)


def parse_team(prompt: str) -> Team:
    me = _SELF.search(prompt)
    user = _USER.search(prompt)
    return Team(
        name=me.group(1) if me else "",
        pubkey=me.group(2) if me else "",
        user_name=user.group(1) if user else "",
        user_pubkey=user.group(2) if user else "",
        teammates=[Teammate(*row) for row in _ROW.findall(prompt)],
    )
