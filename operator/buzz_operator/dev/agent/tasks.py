"""Recognise the buzz-native tasks from their instruction text and compute their answers.

Pure functions: the instruction is all a real agent sees, so recognition reads only the text
(numbers, names, paths), never the task's name. Each recogniser returns None unless it is
confident, and `recognise` tries them from most to least specific.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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


@dataclass(frozen=True)
class SavedOutput:
    """Run a given shell command and save what it prints to a given file: a task whose work is
    the command's, so what the command needs (memory, CPU) is what the trial's box must give."""

    command: str
    path: str

    def answer(self, exit_code: int) -> str:
        if exit_code == 0:
            return f"Ran the command and saved its output to {self.path}."
        return f"The command failed (exit {exit_code}); nothing saved to {self.path}."


@dataclass(frozen=True)
class MultilineMessage:
    """Send a given block back with its layout: the body exactly as the instruction holds it,
    blank lines and list lines included (the answer must reach the relay with real newlines)."""

    body: str

    def answer(self) -> str:
        return self.body

    def escaped(self) -> str:
        """The body as a naive shell quoting leaves it: every newline a literal backslash-n."""
        return self.body.replace("\n", "\\n")


@dataclass(frozen=True)
class NarrativeStatus:
    """A status summary about named agents that must stay narrative: the agents are named in
    plain text, never mentioned (no p tag, no `@Name`)."""

    lines: tuple[str, ...]  # one status sentence per agent, as the instruction words it
    names: tuple[str, ...]  # the agents' display names, in order

    def answer(self) -> str:
        return "\n".join(self.lines)

    def at_named(self) -> str:
        """The same lines with every agent written as a mention (`@Name`)."""
        text = self.answer()
        for name in self.names:
            text = text.replace(name, f"@{name}")
        return text


@dataclass(frozen=True)
class InterleavedReports:
    """Wait for several reports, then compute `formula` over the values they carry."""

    formula: str  # as the instruction writes it, e.g. "(North + South - reserve) * multiplier"
    variables: tuple[str, ...]  # the formula's names, in order of appearance
    reports: int  # how many reports the instruction announces

    def values(self, texts: list[str]) -> dict[str, float]:
        """Each variable's value as some report states it (`North is 17`, `a reserve of 11`)."""
        found: dict[str, float] = {}
        for text in texts:
            for name in self.variables:
                match = re.search(rf"\b{re.escape(name)}\s+(?:is|of|=|:)\s*(-?\d+(?:\.\d+)?)\b",
                                  text, re.IGNORECASE)
                if match is not None and name not in found:
                    found[name] = float(match.group(1))
        return found

    def complete(self, values: dict[str, float]) -> bool:
        return all(name in values for name in self.variables)

    def result(self, values: dict[str, float]) -> float:
        expression = self.formula
        for name in sorted(self.variables, key=len, reverse=True):
            expression = re.sub(rf"\b{re.escape(name)}\b", _plain_number(values[name]), expression)
        return evaluate(expression)

    def answer(self, values: dict[str, float]) -> str:
        """Every input labelled, then the final value (only when `values` is complete)."""
        lines = [f"{name[:1].upper()}{name[1:]}: {_plain_number(values[name])}" for name in self.variables]
        substituted = self.formula
        for name in sorted(self.variables, key=len, reverse=True):
            substituted = re.sub(rf"\b{re.escape(name)}\b", _plain_number(values[name]), substituted)
        lines.append(f"Final value: {substituted} = {_plain_number(self.result(values))}")
        return "\n".join(lines)

    def partial(self, values: dict[str, float]) -> str:
        """An answer from whatever has arrived: unknown inputs stated as such, no final value."""
        lines = [f"{name[:1].upper()}{name[1:]}: "
                 + (_plain_number(values[name]) if name in values else "not reported yet")
                 for name in self.variables]
        lines.append("Final value: cannot be computed until every input is known")
        return "\n".join(lines)


@dataclass(frozen=True)
class LabelledCalculation:
    """One of several labelled requests (`ALPHA request: calculate …`), each answered on its own,
    labelled, in its own thread."""

    label: str
    expression: str

    def value(self) -> float:
        return evaluate(self.expression)

    def answer(self) -> str:
        # the value right after the label: a verifier reads `<label>` then the first number
        return f"{self.label} result: {_plain_number(self.value())}"


@dataclass(frozen=True)
class AmbiguousMention:
    """Message one of several identities sharing a display name, told apart by their profiles'
    `about`; then confirm to the requester."""

    name: str  # the shared display name
    marker: str  # what the right profile says, e.g. "Routing code ORCHID-72"
    message: str  # what to send that person

    def picks(self, profiles: list[tuple[str, str, str]]) -> list[str]:
        """Pubkeys of the (pubkey, name, about) profiles that are `name` and whose about carries
        the marker (case-insensitively; the routing code alone also counts)."""
        code = _CODE.search(self.marker)
        wanted = [self.marker.casefold()] + ([code.group(0).casefold()] if code else [])
        return list(dict.fromkeys(
            pubkey for pubkey, name, about in profiles
            if name == self.name and any(term in about.casefold() for term in wanted)))

    def namesakes(self, profiles: list[tuple[str, str, str]]) -> list[str]:
        return list(dict.fromkeys(pubkey for pubkey, name, _ in profiles if name == self.name))

    def answer(self) -> str:
        return f"Sent `{self.message}` to {self.name} ({self.marker}); the other {self.name} was not notified."


Task = Union[Projection, LicenseTotal, ChannelInvite, NamedPath, HelloFile,  # noqa: UP007 -- 3.9 (compat.py)
             SavedOutput, MultilineMessage, NarrativeStatus, InterleavedReports, LabelledCalculation, AmbiguousMention]

_CODE = re.compile(r"\b[A-Z][A-Z0-9]*-\d+\b")
_ARITHMETIC = re.compile(r"^[\d\s+\-*/().]+$")


def _plain_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def evaluate(expression: str) -> float:
    """+ - * / and parentheses over decimal numbers, nothing else (never `eval`)."""
    if not _ARITHMETIC.match(expression):
        raise ValueError(f"not plain arithmetic: {expression!r}")
    tokens = re.findall(r"\d+(?:\.\d+)?|[-+*/()]", expression)
    at = 0

    def peek() -> str | None:
        return tokens[at] if at < len(tokens) else None

    def take() -> str:
        nonlocal at
        if at >= len(tokens):
            raise ValueError(f"unexpected end of {expression!r}")
        at += 1
        return tokens[at - 1]

    def atom() -> float:
        token = take()
        if token == "(":
            value = total()
            if take() != ")":
                raise ValueError(f"unbalanced parentheses in {expression!r}")
            return value
        if token == "-":
            return -atom()
        return float(token)

    def product() -> float:
        value = atom()
        while peek() in ("*", "/"):
            value = value * atom() if take() == "*" else value / atom()
        return value

    def total() -> float:
        value = product()
        while peek() in ("+", "-"):
            value = value + product() if take() == "+" else value - product()
        return value

    result = total()
    if at != len(tokens):
        raise ValueError(f"trailing input in {expression!r}")
    return result


def _paragraphs(text: str) -> list[str]:
    return [p.strip("\n") for p in re.split(r"\n[ \t]*\n", text.strip()) if p.strip()]


def _multiline_message(text: str) -> MultilineMessage | None:
    """`Send me this … update, preserving the … layout:` then the block, then a closing line."""
    paragraphs = _paragraphs(text)
    if len(paragraphs) < 3:
        return None
    lead = paragraphs[0]
    if not (re.search(r"\b(?:send|post)\b", lead, re.IGNORECASE) and re.search(r"\blayout\b", lead, re.IGNORECASE)
            and re.search(r"\b(?:preserv|keep)", lead, re.IGNORECASE) and lead.rstrip().endswith(":")):
        return None
    body = paragraphs[1:-1]
    if not any(re.match(r"^\s*[-*] ", line) for block in body for line in block.splitlines()):
        return None  # "paragraph and list layout" with no list to keep is not this task
    return MultilineMessage("\n\n".join("\n".join(line.rstrip() for line in block.splitlines())
                                        for block in body))


_AGENT_NAME = r"((?:[A-Z][\w-]*\s+){1,4}(?:Bot|Agent))"


def _narrative_status(text: str) -> NarrativeStatus | None:
    """A status update whose bullets each start with an agent's name (`- Aurora Audit Bot …`)."""
    if not re.search(r"\bstatus\b", text, re.IGNORECASE):
        return None
    bullets = re.findall(r"^\s*[-*]\s+" + _AGENT_NAME + r"\b(.*\S)\s*$", text, re.MULTILINE)
    if len(bullets) < 2:
        return None
    lines = tuple(f"{name}{rest}" for name, rest in bullets)
    return NarrativeStatus(lines, tuple(name for name, _ in bullets))


def _interleaved_reports(text: str) -> InterleavedReports | None:
    """Several announced reports, a wait for all of them, and a formula (in backticks) over
    named inputs."""
    count = re.search(r"\b(\d+|two|three|four|five|six)\s+(?:\w+\s+){0,2}(?:agents|reporters|bots)\b[^.]*\breport",
                      text, re.IGNORECASE)
    if count is None or not re.search(r"\bwait\b", text, re.IGNORECASE):
        return None
    formula = next((f for f in re.findall(r"`([^`]+)`", text) if re.search(r"[A-Za-z]", f)
                    and re.fullmatch(r"[\w\s+\-*/().]+", f) and re.search(r"[-+*/]", f)), None)
    if formula is None:
        return None
    variables = tuple(dict.fromkeys(re.findall(r"[A-Za-z_]\w*", formula)))
    raw = count.group(1).lower()
    return InterleavedReports(formula.strip(), variables, int(raw) if raw.isdigit() else _WORD_NUMBERS[raw])


def _labelled_calculation(text: str) -> LabelledCalculation | None:
    """`ALPHA request: calculate `(17 * 19) + 23`.` (backticks optional)."""
    match = re.search(r"\b([A-Z][A-Z0-9]+)\s+request:\s*calculate\s+`?([\d\s+\-*/().]+?)`?\s*(?:\.(?:\s|$)|$)",
                      text)
    if match is None:
        return None
    try:
        evaluate(match.group(2))
    except (ValueError, ZeroDivisionError):
        return None
    return LabelledCalculation(match.group(1), match.group(2).strip())


def _ambiguous_mention(text: str) -> AmbiguousMention | None:
    """Several members displayed as one name; the right one is the one whose profile says X;
    send them a given message."""
    name = re.search(r"\b(?:displayed|named|called)\s+as\s+`([^`]+)`|\bboth\s+(?:displayed|named|called)\s+`([^`]+)`",
                     text, re.IGNORECASE)
    marker = re.search(r"\bprofile\s+(?:says|reads|mentions|contains)\s+`([^`]+)`", text, re.IGNORECASE)
    message = re.search(r"\bthe\s+message\s+`([^`]+)`", text, re.IGNORECASE)
    if not (name and marker and message):
        return None
    return AmbiguousMention(name.group(1) or name.group(2), marker.group(1), message.group(1))


def recognise(instruction: str) -> Task | None:
    """The task an instruction asks for, or None when the stand-in cannot tell."""
    for recogniser in (_labelled_calculation, _ambiguous_mention, _interleaved_reports, _narrative_status,
                       _multiline_message, _projection, _channel_invite, _saved_output, _named_path, _hello_file,
                       _license_total):
        task = recogniser(instruction)
        if task is not None:
            return task
    return None


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


def _saved_output(text: str) -> SavedOutput | None:
    """`Run `<command>` … save (or write) what it prints to `/path``."""
    match = re.search(r"\bRun\s+`([^`]+)`.*?\bprints\b.*?\bto\s+`(/[^`\s]+)`", text, re.IGNORECASE | re.DOTALL)
    return SavedOutput(match.group(1), match.group(2)) if match else None


def _hello_file(text: str) -> HelloFile | None:
    name = re.search(r"\b(hello\.txt)\b", text)
    if name is None:
        return None
    # the wanted content: quoted or in backticks after "content is (exactly)", "containing", "write"
    quoted = re.search(r"(?:content(?:\s+is)?(?:\s+exactly)?|containing|write)\s*:?\s*[`\"“']([^`\"”']+)[`\"”']",
                       text, re.IGNORECASE)
    return HelloFile(name.group(1), quoted.group(1) if quoted else "Hello, world!")




@dataclass(frozen=True)
class Message:
    """A delivered Buzz event as both stacks' policies see it (the stand-in from the event itself,
    the scripted model from buzz-acp's rendering of it)."""

    event_id: str
    sender: str
    content: str
    root_id: str | None = None  # the thread it replies into, if any


@dataclass
class Request:
    """A delivered event asking for something, with the later events that reply into its thread
    (reports, answers): a request is answered from its own text plus those inputs."""

    message: Message
    task: Task | None
    inputs: list[Message] = field(default_factory=list)


def requests_of(messages: list[Message], instruction: Callable[[str], str]) -> list[Request]:
    """The requests among everything delivered so far, oldest first. An event replying into the
    thread of a known request is an input to it; any other event is a request of its own, except
    an unrecognised reply into a thread this agent never saw (nothing it was asked)."""
    requests: dict[str, Request] = {}
    seen: set[str] = set()
    for message in messages:
        if message.event_id in seen:
            continue  # delivered again (a re-rendered batch, a steer)
        seen.add(message.event_id)
        if message.root_id is not None and message.root_id in requests:
            requests[message.root_id].inputs.append(message)
            continue
        task = recognise(instruction(message.content))
        if message.root_id is not None and task is None:
            continue
        requests[message.event_id] = Request(message, task)
    return list(requests.values())


def strip_mention(content: str, name: str) -> str:
    """The task message is `@<orchestrator> <instruction>`; drop the leading mention."""
    prefix = f"@{name}"
    text = content.lstrip()
    return text[len(prefix):].lstrip() if name and text.startswith(prefix) else text
