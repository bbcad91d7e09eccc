"""RUST_LOG filtering and the log lines the ledger parses (docs/accounting.md#log-lines), checked against the ledger's
regexes as written in the reference (the ledger module itself is another room's)."""

from __future__ import annotations

import io
import re

import pytest
from buzz_operator.dev.agent.tracing import EnvFilter, Logger
from buzz_operator.dev.agent.usage import Session, handoff_line, handoff_threshold, tokens, usage_line

ANSI = re.compile(r"\x1b\[[0-9;]*[a-zA-Z]")
SESSION = re.compile(r"\bsession_id=(\S+)")
INPUT = re.compile(r"\binput=(?:Some\()?(\d+)\)?\b")
OUTPUT = re.compile(r"\boutput=(?:Some\()?(\d+)\)?\b")
CACHED = re.compile(r"\bcached=(\d+)\b")
HANDOFF = re.compile(r"\bhandoff #(\d+) \(history .*?; (\d+) -> \d+ tokens\)")
RUNTIME_DEFAULT = "buzz_acp=info,acp::usage=debug,pool::prompt=info,acp::stream=info,acp::tool=info"


@pytest.mark.parametrize(
    ("spec", "target", "level", "enabled"),
    [
        (RUNTIME_DEFAULT, "acp::usage", "debug", True),
        (RUNTIME_DEFAULT, "buzz_acp", "info", True),
        (RUNTIME_DEFAULT, "buzz_acp", "debug", False),
        (RUNTIME_DEFAULT, "buzz_agent::handoff", "info", False),
        ("info", "buzz_agent::handoff", "info", True),
        ("info", "acp::usage", "debug", False),
        ("acp=debug,acp::usage=warn", "acp::usage", "debug", False),  # longest target wins
        ("acp=debug,acp::usage=warn", "acp::stream", "debug", True),
        ("acp", "acp::usage", "trace", True),  # bare target = trace
        ("acpx=debug", "acp::usage", "debug", False),  # prefix only on :: boundaries
        ("warn,buzz_acp=off", "buzz_acp", "error", False),
        ("buzz_acp[turn]=debug,bogus=loud", "buzz_acp", "debug", False),  # skipped, not guessed
        ("", "buzz_acp", "info", True),  # unset RUST_LOG falls back to buzz_acp=info
    ],
)
def test_env_filter(spec: str, target: str, level: str, enabled: bool) -> None:
    assert EnvFilter(spec).enabled(target, level) is enabled


def test_logger_writes_tracing_shape_only_when_enabled() -> None:
    out = io.StringIO()
    log = Logger(EnvFilter("buzz_acp=info"), out)
    log.debug("acp::usage", "goose usage update session_id=s input=1 output=1 cached=0")
    log.info("buzz_acp", "subscribed to channel abc")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z  INFO buzz_acp: subscribed to channel abc", lines[0])


def test_usage_line_round_trips_through_ledger_regexes() -> None:
    out = io.StringIO()
    Logger(EnvFilter(RUNTIME_DEFAULT), out).debug("acp::usage", usage_line("standin-ab-cd", 1234, 56, 78))
    line = ANSI.sub("", out.getvalue())
    assert " DEBUG acp::usage: goose usage update " in line
    assert SESSION.search(line).group(1) == "standin-ab-cd"
    assert INPUT.search(line).group(1) == "1234"
    assert OUTPUT.search(line).group(1) == "56"
    assert CACHED.search(line).group(1) == "78"


def test_handoff_line_round_trips() -> None:
    line = f"INFO buzz_agent::handoff: {handoff_line(2, 84, 3, 181430, 5120)}"
    assert line.endswith("handoff #2 (history 84 -> 3 items; 181430 -> 5120 tokens)")
    match = HANDOFF.search(line)
    assert match is not None and match.groups() == ("2", "181430")


def test_session_counters_are_cumulative_deterministic_and_cached_is_the_prefix() -> None:
    def run() -> Session:
        session = Session("s", "p" * 400)
        session.read("q" * 40)
        session.write("a" * 80)
        session.read("r" * 20)
        return session

    first, second = run(), run()
    assert (first.input_tokens, first.output_tokens, first.cached_tokens) == (
        second.input_tokens, second.output_tokens, second.cached_tokens)
    # call 1 reads 100+10, call 2 reads 100+10+20+5; call 2 hits the 110+20 prefix
    assert first.input_tokens == 110 + 135
    assert first.output_tokens == 20
    assert first.cached_tokens == 130
    assert first.cached_tokens <= first.input_tokens
    assert tokens("ü" * 4) == 2  # bytes, not characters


def test_handoff_fires_when_context_crosses_threshold() -> None:
    threshold = handoff_threshold("50", "200", None)  # 50% of a 200-token window
    assert threshold == 100
    session = Session("s", "p" * 200, threshold)  # 50 tokens of prompt
    assert session.read("x" * 120) is None  # 80 tokens
    handoff = session.read("y" * 120)  # would be 110 > 100
    assert handoff is not None
    assert (handoff.number, handoff.items_before, handoff.items_after, handoff.tokens_before) == (1, 2, 1, 110)
    assert HANDOFF.search(handoff.line()) is not None
    assert session.context_tokens() < threshold


def test_handoff_threshold_defaults() -> None:
    assert handoff_threshold(None, None, None) == 272_000
    assert handoff_threshold(None, "200000", None) == 180_000
    assert handoff_threshold(None, None, "0") is None
