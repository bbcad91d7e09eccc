"""Credential-shaped strings in a bundle (docs/bundle.md#secret-scan ``scan_for_secrets``).

Every agent runs with a live provider token and a Nostr private key in its environment, so a
bundle is scanned before it counts as complete. A finding names the file, the line and the kind —
never the matched text, which would copy the very secret into the report.

Files are streamed; each chunk of whole lines is searched in C first and line numbers are worked
out only for the hits, so a clean 200 MB log costs a handful of regex passes, not one per line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

from buzz_operator.api.secret_text import SECRET_KINDS
from buzz_operator.ledger.lines import iter_line_chunks

TRIAL_CREDENTIAL = "trial-credential"
HEX_64 = "hex-64"
# docs/bundle.md#secret-scan: the kinds a status is scrubbed of too (api/secret_text.py), one list
SECRET_PATTERNS = SECRET_KINDS
# A literal every match must contain, tested on the chunk (or its lowercase, for the
# case-insensitive kinds) before any regex runs: secrets are rare, so most chunks stop here.
# The case-insensitive gates leave out "s" and "i": re.IGNORECASE also matches "ſ", "ı" and
# "İ" there, which lower() does not fold, and a gate must never be narrower than its pattern.
_GATES = {
    "nostr-private-key": ("ec1", True),
    "anthropic-key": ("sk-ant-", False),
    "openai-key": ("sk-", False),
    "databricks-token": ("dap", True),
    "bearer-header": ("uthorization:", False),
}
# `\s*` may cross a line break inside a chunk while the seed matches per line, so this kind is
# searched line by line. Every other pattern can only match within one line, so its chunk-level
# matches map straight to lines.
_PER_LINE_KINDS = frozenset({"bearer-header"})
_SENTINEL = "\x00"
# Hex digits become the sentinel; a NUL already in the text becomes something else.
_HEX_TO_SENTINEL = {ord(c): _SENTINEL for c in "0123456789abcdefABCDEF"} | {0: "\x01"}
_HEX_RUN = _SENTINEL * 64
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
REVIEW_KINDS = frozenset({HEX_64})
# Shortest known-secret literal worth substring-matching: shorter ones collide with ordinary text.
MIN_SECRET_LENGTH = 16
# Files that legitimately hold 64-hex digests (manifest and prompt hashes).
HEX_ALLOWED_FILES = frozenset({"manifest.json", "summary.json", "receipts.jsonl"})
# Compared case-insensitively: CONFIG.YAML is scanned.
SCANNED_SUFFIXES = frozenset({".json", ".jsonl", ".log", ".md", ".txt", ".yaml", ".yml"})
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_KIND_ORDER = {TRIAL_CREDENTIAL: 0} | {kind: index + 1 for index, (kind, _) in enumerate(SECRET_PATTERNS)}


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One suspected secret, located precisely enough to act on."""

    path: str
    line: int
    kind: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class SecretScan:
    """The ``secret_scan`` block of ``summary.json``."""

    findings: tuple[SecretFinding, ...] = ()
    review: tuple[SecretFinding, ...] = ()
    # Files that could not be read, as "<relative path>: <reason>". A file the scan could not see
    # is not a file it found clean, so any entry here makes the bundle not clean.
    unreadable: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """No definite leak; review items (hex-64) do not count against it (docs/bundle.md#secret-scan)."""
        return not self.findings and not self.unreadable

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "clean": self.clean,
            "findings": [finding.to_json() for finding in self.findings],
            "review": [finding.to_json() for finding in self.review],
        }
        if self.unreadable:
            data["unreadable"] = list(self.unreadable)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SecretScan:
        """The scan a committed summary.json records (the inverse of to_json)."""
        def findings(key: str) -> tuple[SecretFinding, ...]:
            return tuple(SecretFinding(str(f["path"]), int(f["line"]), str(f["kind"])) for f in data.get(key) or [])
        return cls(findings=findings("findings"), review=findings("review"),
                   unreadable=tuple(str(u) for u in data.get("unreadable") or []))


def trial_secret_literals(secrets: Iterable[str]) -> tuple[str, ...]:
    """The trial's own secret strings worth matching: at least 16 characters, one line each."""
    return tuple(
        sorted(
            {
                secret
                for secret in secrets
                if len(secret) >= MIN_SECRET_LENGTH and not any(c in secret for c in _LINE_BREAKS)
            }
        )
    )


def scan_bundle(root: Path, known_secrets: Iterable[str] = (), beside: Mapping[str, Path] | None = None) -> SecretScan:
    """Scan every file under ``root`` with a scanned suffix, in sorted path order (docs/bundle.md#secret-scan),
    then each file ``beside`` it (name → path: the trial's trajectory, outside the agent bundle).

    ``known_secrets`` is the trial's own secret material (each seat's and the user's Nostr secret
    key, auth tag and provider API key): a hit there is not a credential-shaped string but the
    very credential the trial ran with, reported as ``trial-credential``.
    """
    literals = trial_secret_literals(known_secrets)
    findings: list[SecretFinding] = []
    unreadable: list[str] = []
    inside = [(path.relative_to(root).as_posix(), path) for path in sorted(root.rglob("*"))]
    for relative, path in [*inside, *sorted((beside or {}).items())]:
        if path.suffix.lower() not in SCANNED_SUFFIXES or not path.is_file():
            continue
        try:
            findings.extend(scan_file(path, relative, literals))
        except OSError as error:
            unreadable.append(f"{relative}: {error.strerror or error}")
    return SecretScan(
        findings=tuple(f for f in findings if f.kind not in REVIEW_KINDS),
        review=tuple(f for f in findings if f.kind in REVIEW_KINDS),
        unreadable=tuple(unreadable),
    )


def scan_file(path: Path, relative: str, literals: tuple[str, ...]) -> list[SecretFinding]:
    """Findings of one file, ordered by line and then by kind as the seed reports them."""
    hex_allowed = path.name in HEX_ALLOWED_FILES
    hits: set[tuple[int, str]] = set()
    first_line = 1
    for chunk in iter_line_chunks(path):
        locator = _LineLocator(chunk)
        lowered = chunk.lower()
        for literal in literals:
            start = chunk.find(literal)
            while start >= 0:
                line = locator.line_of(start)
                hits.add((first_line + line, TRIAL_CREDENTIAL))
                # One finding per line: continue from the next line.
                start = chunk.find(literal, locator.line_end(start))
        for kind, pattern in SECRET_PATTERNS:
            if kind == HEX_64:
                if not hex_allowed:
                    hits.update((first_line + line, HEX_64) for line in _hex64_lines(chunk, locator))
                continue
            gate, case_blind = _GATES[kind]
            if gate not in (lowered if case_blind else chunk):
                continue
            if kind in _PER_LINE_KINDS:
                for line, text in enumerate(locator.lines()):
                    if pattern.search(text):
                        hits.add((first_line + line, kind))
                continue
            for match in pattern.finditer(chunk):
                hits.add((first_line + locator.line_of(match.start()), kind))
        first_line += locator.line_count()
    return [
        SecretFinding(relative, line, kind)
        for line, kind in sorted(hits, key=lambda hit: (hit[0], _KIND_ORDER[hit[1]]))
    ]


def _hex64_lines(chunk: str, locator: _LineLocator) -> list[int]:
    """Lines holding a run of exactly 64 hex digits (the seed's lookarounds forbid longer runs).

    Hex digits are mapped to one sentinel in C, then 64-sentinel runs are found with ``find``:
    far cheaper than a regex that must try every hex character of every word as a start.
    """
    marked = chunk.translate(_HEX_TO_SENTINEL)
    lines: list[int] = []
    start = marked.find(_HEX_RUN)
    while start >= 0:
        end = start + len(_HEX_RUN)
        if end < len(marked) and marked[end] == _SENTINEL:
            # Longer than 64: not a match anywhere in this run; skip past its end.
            while end < len(marked) and marked[end] == _SENTINEL:
                end += 1
        elif start == 0 or marked[start - 1] != _SENTINEL:
            lines.append(locator.line_of(start))
        start = marked.find(_HEX_RUN, end)
    return lines


class _LineLocator:
    """Maps offsets in a chunk to 0-based ``splitlines()`` line indexes.

    Most chunks break lines on "\\n" only; for those, counting "\\n" in C is enough. Any other
    break character (which ``splitlines()`` also honours) switches to cumulative line ends.
    """

    def __init__(self, chunk: str) -> None:
        self.chunk = chunk
        self._newline_only = not any(mark in chunk for mark in _OTHER_BREAKS)
        self._ends: list[int] | None = None
        # Hits arrive in increasing offset order within a pattern, so newline counts resume from
        # the previous hit instead of rescanning the chunk from its start each time.
        self._counted_to = 0
        self._newlines_before = 0

    def _build(self) -> list[int]:
        if self._ends is None:
            self._ends = list(accumulate(map(len, self.chunk.splitlines(keepends=True))))
        return self._ends

    def line_of(self, offset: int) -> int:
        if self._newline_only:
            if offset < self._counted_to:
                self._counted_to = self._newlines_before = 0
            self._newlines_before += self.chunk.count("\n", self._counted_to, offset)
            self._counted_to = offset
            return self._newlines_before
        return bisect_right(self._build(), offset)

    def line_end(self, offset: int) -> int:
        """Offset just past the line break that ends the line holding ``offset``."""
        if self._newline_only:
            found = self.chunk.find("\n", offset)
            return len(self.chunk) if found < 0 else found + 1
        return self._build()[self.line_of(offset)]

    def lines(self) -> list[str]:
        return self.chunk.splitlines()

    def line_count(self) -> int:
        if self._newline_only:
            trailing = 1 if self.chunk and not self.chunk.endswith("\n") else 0
            return self.chunk.count("\n") + trailing
        return len(self._build())
