"""Recognise the buzz-native tasks from their instruction text and compute their answers.

Pure functions: the instruction is all a real agent sees, so recognition reads only the text
(numbers, names, paths), never the task's name. Each recogniser returns None unless it is
confident, and `recognise` tries them from most to least specific.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

_MONEY = r"\$?\s*(\d[\d,]*(?:\.\d+)?)"
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "an": 1, "a": 1}
_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _dollars(value: float) -> str:
    return f"${round(value):,}"


@dataclass(frozen=True)
class Projection:
    revenue0: float
    expenses0: float
    revenue_growth: float  # percent per month
    expenses_growth: float
    months: int

    def results(self) -> tuple[int, int, int]:
        revenue, expenses, cumulative = self.revenue0, self.expenses0, 0.0
        for _ in range(self.months):
            revenue *= 1 + self.revenue_growth / 100
            expenses *= 1 + self.expenses_growth / 100
            cumulative += revenue - expenses
        return round(revenue), round(expenses), round(cumulative)

    def answer(self) -> str:
        revenue, expenses, profit = self.results()
        n = self.months
        return (f"Month {n} revenue: {_dollars(revenue)}\n"
                f"Month {n} expenses: {_dollars(expenses)}\n"
                f"Cumulative operating profit (months 1-{n}): {_dollars(profit)}")


@dataclass(frozen=True)
class LicenseTotal:
    licenses: int
    unit_price: float
    months: int

    def total(self) -> float:
        return self.licenses * self.unit_price * self.months

    def answer(self) -> str:
        return (f"The total is {_dollars(self.total())} "
                f"({self.licenses} licenses x ${self.unit_price:g} x {self.months} months).")


@dataclass(frozen=True)
class ChannelInvite:
    name: str
    ttl_seconds: int | None
    members: list[tuple[str, str]] = field(default_factory=list)  # (directory name, role)

    def answer(self, channel_id: str) -> str:
        invited = ", ".join(f"{name} ({role})" for name, role in self.members)
        return f"Created private stream channel {self.name} ({channel_id}) and invited {invited}."


@dataclass(frozen=True)
class NamedPath:
    path: str

    @staticmethod
    def fields(content: str) -> tuple[str | None, str | None]:
        check = re.search(r"^CHECK_ID:\s*(\S+)\s*$", content, re.MULTILINE)
        action = re.search(r"^ACTION:\s*(\S.*\S|\S)\s*$", content, re.MULTILINE)
        return (check.group(1) if check else None, action.group(1) if action else None)

    def answer(self, content: str) -> str:
        check, action = self.fields(content)
        if check is None or action is None:
            return f"I read {self.path} but it has no CHECK_ID/ACTION lines."
        return f"CHECK_ID is {check}.\nACTION: {action}"


@dataclass(frozen=True)
class HelloFile:
    filename: str
    content: str

    def answer(self, path: str) -> str:
        return f"Wrote {self.content!r} to {path}."


Task = Union[Projection, LicenseTotal, ChannelInvite, NamedPath, HelloFile]  # noqa: UP007 -- 3.9 (compat.py)


def _projection(text: str) -> Projection | None:
    lower = text.lower()
    if "revenue" not in lower or "expense" not in lower or "grow" not in lower:
        return None
    rev0 = re.search(r"revenue\D{0,40}?" + _MONEY, text, re.IGNORECASE)
    exp0 = re.search(r"expenses\D{0,40}?" + _MONEY, text, re.IGNORECASE)
    rev_g = re.search(r"revenue\s+grows?\D{0,40}?(\d+(?:\.\d+)?)\s*%", text, re.IGNORECASE)
    exp_g = re.search(r"expenses\s+grows?\D{0,40}?(\d+(?:\.\d+)?)\s*%", text, re.IGNORECASE)
    months = re.search(r"months?\s+1\s+(?:through|to|-|–)\s+(\d+)", text, re.IGNORECASE)
    months = months or re.search(r"(\d+|\w+)-month", text, re.IGNORECASE)
    if not (rev0 and exp0 and rev_g and exp_g and months):
        return None
    raw_months = months.group(1).lower()
    count = int(raw_months) if raw_months.isdigit() else _WORD_NUMBERS.get(raw_months)
    if not count:
        return None
    return Projection(_number(rev0.group(1)), _number(exp0.group(1)),
                      _number(rev_g.group(1)), _number(exp_g.group(1)), count)


def _license_total(text: str) -> LicenseTotal | None:
    licenses = re.search(r"(\d[\d,]*)\s+(?:\w+\s+){0,2}(?:licen[cs]es|seats)", text, re.IGNORECASE)
    price = re.search(r"\$\s*(\d[\d,]*(?:\.\d+)?)", text)
    if not (licenses and price):
        return None
    months_match = re.search(r"(\d+)\s+months", text, re.IGNORECASE)
    if months_match:
        months = int(months_match.group(1))
    elif re.search(r"\b(annual|year|yearly|12-month)\b", text, re.IGNORECASE):
        months = 12
    else:
        months = 1
    return LicenseTotal(int(_number(licenses.group(1))), _number(price.group(1)), months)


def _ttl_seconds(text: str) -> int | None:
    match = re.search(r"\b(\d+|one|two|three|an|a)[\s-]+(second|minute|hour|day)s?\b", text, re.IGNORECASE)
    if match is None:
        return None
    amount = match.group(1).lower()
    count = int(amount) if amount.isdigit() else _WORD_NUMBERS[amount]
    return count * _UNIT_SECONDS[match.group(2).lower()]


def _channel_invite(text: str) -> ChannelInvite | None:
    if not re.search(r"\bchannel\b", text, re.IGNORECASE):
        return None
    name = re.search(r"(?:channel\s+(?:named|called)\s+)[`'\"]?([a-z0-9][a-z0-9._-]*)", text, re.IGNORECASE)
    name = name or re.search(r"`#?([a-z0-9][a-z0-9._-]*-[a-z0-9._-]+)`", text)
    if name is None:
        return None
    channel = name.group(1).rstrip(".")
    members: list[tuple[str, str]] = []
    for match in re.finditer(r"\b([a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d+)\b", text):
        handle = match.group(1)
        if handle == channel or any(handle == seen for seen, _ in members):
            continue
        role = "bot" if re.search(r"(?:^|-)bot(?:-|$)", handle) else "member"
        members.append((handle, role))
    if not members:
        return None
    return ChannelInvite(channel, _ttl_seconds(text), members)


def _named_path(text: str) -> NamedPath | None:
    match = re.search(r"`((?:~|/)[^`\s]+)`", text) or re.search(r"(?<![\w/])(~/[^\s`'\"]+)", text)
    if match is None or not re.search(r"\bread\b", text, re.IGNORECASE):
        return None
    return NamedPath(match.group(1).rstrip(".,;"))


def _hello_file(text: str) -> HelloFile | None:
    name = re.search(r"\b(hello\.txt)\b", text)
    if name is None:
        return None
    # the wanted content: quoted or in backticks after "content is (exactly)", "containing", "write"
    quoted = re.search(r"(?:content(?:\s+is)?(?:\s+exactly)?|containing|write)\s*:?\s*[`\"“']([^`\"”']+)[`\"”']",
                       text, re.IGNORECASE)
    return HelloFile(name.group(1), quoted.group(1) if quoted else "Hello, world!")


def recognise(instruction: str) -> Task | None:
    """The task an instruction asks for, or None when the stand-in cannot tell."""
    for recogniser in (_projection, _channel_invite, _named_path, _hello_file, _license_total):
        task = recogniser(instruction)
        if task is not None:
            return task
    return None


def strip_mention(content: str, name: str) -> str:
    """The task message is `@<orchestrator> <instruction>`; drop the leading mention."""
    prefix = f"@{name}"
    text = content.lstrip()
    return text[len(prefix):].lstrip() if name and text.startswith(prefix) else text
