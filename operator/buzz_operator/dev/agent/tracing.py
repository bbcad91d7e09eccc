"""Log lines shaped like the Rust `tracing` crate's fmt output, filtered by RUST_LOG.

The ledger reads the real buzz-acp's logs (usage under target `acp::usage` at DEBUG), so the
stand-in must honour RUST_LOG the way EnvFilter does: a usage line only appears when the
runtime's RUST_LOG enables it, which is exactly what reconciliation checks for.
"""

from __future__ import annotations

import datetime
import sys
from typing import TextIO

from .compat import UTC

LEVELS = {"off": 0, "error": 1, "warn": 2, "info": 3, "debug": 4, "trace": 5}
_NAMES = {1: "ERROR", 2: "WARN", 3: "INFO", 4: "DEBUG", 5: "TRACE"}
DEFAULT_DIRECTIVES = "buzz_acp=info"
ACP_TARGET = "buzz_acp"  # buzz-acp's own log target (readiness and turn markers)
TURN_TARGET = "pool::prompt"  # buzz-acp's pool: a turn's start and the events it delivered (pool.rs)


def delivery_receipt_line(channel_id: str, event_ids: list[str]) -> str:
    """crates/buzz-acp/src/pool.rs `delivery_receipt_line`: logged (INFO, `pool::prompt`) when a
    turn has ended successfully, naming every event the turn delivered, sorted and comma-joined."""
    return f"turn delivered Buzz events for channel {channel_id}: {','.join(sorted(set(event_ids)))}"


def turn_starting_line(channel_id: str) -> str:
    """crates/buzz-acp/src/pool.rs: the turn-start line, labelled as `log_stop_reason` labels the
    end (`prompt_label`: `channel <uuid>`)."""
    return f"turn starting for channel {channel_id}"


class EnvFilter:
    """Comma-separated directives: `level` (default for every target), `target=level`, or a
    bare `target` (= trace). The longest matching target prefix (on `::` boundaries) wins,
    as in tracing-subscriber; span filters like `target[span]=level` are not supported and such
    directives are skipped rather than guessed at."""

    def __init__(self, spec: str | None) -> None:
        self.default = LEVELS["error"]
        self.directives: list[tuple[str, int]] = []
        text = spec if spec is not None and spec.strip() else DEFAULT_DIRECTIVES
        for raw in text.split(","):
            part = raw.strip()
            if not part or "[" in part:
                continue
            target, sep, level = part.partition("=")
            if not sep:
                if target.lower() in LEVELS:
                    self.default = LEVELS[target.lower()]
                else:
                    self.directives.append((target, LEVELS["trace"]))
                continue
            value = LEVELS.get(level.strip().lower())
            if value is None:
                continue
            if target:
                self.directives.append((target.strip(), value))
            else:
                self.default = value

    def enabled(self, target: str, level: str) -> bool:
        best: tuple[int, int] | None = None
        for name, value in self.directives:
            matches = target == name or target.startswith(name + "::")
            if matches and (best is None or len(name) > best[0]):
                best = (len(name), value)
        threshold = best[1] if best is not None else self.default
        return LEVELS[level] <= threshold


class Logger:
    def __init__(self, env_filter: EnvFilter, stream: TextIO | None = None) -> None:
        self.filter = env_filter
        self.stream = stream if stream is not None else sys.stderr

    def log(self, level: str, target: str, message: str) -> None:
        if not self.filter.enabled(target, level):
            return
        now = datetime.datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self.stream.write(f"{now} {_NAMES[LEVELS[level]]:>5} {target}: {message}\n")
        self.stream.flush()

    def info(self, target: str, message: str) -> None:
        self.log("info", target, message)

    def debug(self, target: str, message: str) -> None:
        self.log("debug", target, message)

    def warn(self, target: str, message: str) -> None:
        self.log("warn", target, message)

    def error(self, target: str, message: str) -> None:
        self.log("error", target, message)
