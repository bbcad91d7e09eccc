"""Secret scan (docs/bundle.md#secret-scan): every kind, review vs findings, never the secret itself."""

from __future__ import annotations

import json
import random
from functools import partial
from pathlib import Path

import pytest
from buzz_operator.ledger import secret_scan
from buzz_operator.ledger.lines import iter_line_chunks
from buzz_operator.ledger.secret_scan import (
    HEX_ALLOWED_FILES,
    SCANNED_SUFFIXES,
    SECRET_PATTERNS,
    SecretScan,
    scan_bundle,
)

TRIAL_KEY = "c0ffee" * 10 + "abcd"  # a seat's 64-hex Nostr secret key
API_KEY = "tok_live_0123456789abcdef"  # an API key no shape pattern knows
PLANTED = {
    "nostr-private-key": "nsec1" + "qpzry9x8gf2tvdw0s3jn54khce6mua7l" * 2,
    "anthropic-key": "sk-ant-api03-" + "Ab_9" * 8,
    "openai-key": "sk-" + "A1b2C3d4" * 5,
    "databricks-token": "DAPI" + "0123456789abcdef" * 2,
    "bearer-header": "authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload",
}


def plant(root: Path) -> None:
    lines = ["INFO ok"] + [f"WARN leaked {value}" for value in PLANTED.values()]
    (root / "lead-1.stdout.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "CONFIG.YAML").write_text(f"key: {API_KEY}\nsecond: {TRIAL_KEY}\n", encoding="utf-8")
    (root / "binary.bin").write_text(PLANTED["openai-key"], encoding="utf-8")  # not a scanned suffix
    (root / "nested").mkdir()
    (root / "nested" / "notes.md").write_text(f"pubkey `{'ab' * 32}`\n", encoding="utf-8")
    (root / "manifest.json").write_text(json.dumps({"sha256": "12" * 32}), encoding="utf-8")


def test_every_kind_is_found_and_located(tmp_path: Path) -> None:
    plant(tmp_path)
    scan = scan_bundle(tmp_path, [TRIAL_KEY, API_KEY, "short-secret"])
    assert [f.to_json() for f in scan.findings] == [
        {"path": "CONFIG.YAML", "line": 1, "kind": "trial-credential"},
        {"path": "CONFIG.YAML", "line": 2, "kind": "trial-credential"},
        {"path": "lead-1.stdout.log", "line": 2, "kind": "nostr-private-key"},
        {"path": "lead-1.stdout.log", "line": 3, "kind": "anthropic-key"},
        {"path": "lead-1.stdout.log", "line": 4, "kind": "openai-key"},
        {"path": "lead-1.stdout.log", "line": 5, "kind": "databricks-token"},
        {"path": "lead-1.stdout.log", "line": 6, "kind": "bearer-header"},
    ]
    # hex-64 is review only, and never reported for manifest.json.
    assert [f.to_json() for f in scan.review] == [
        {"path": "CONFIG.YAML", "line": 2, "kind": "hex-64"},
        {"path": "nested/notes.md", "line": 1, "kind": "hex-64"},
    ]
    assert scan.clean is False
    rendered = json.dumps(scan.to_json())
    for secret in [TRIAL_KEY, API_KEY, *PLANTED.values()]:
        assert secret not in rendered
    # a committed summary.json gives the same scan back (a restarted bundle step reads it)
    assert SecretScan.from_json(json.loads(rendered)) == scan


def test_hex_only_bundle_is_clean_but_listed_for_review(tmp_path: Path) -> None:
    (tmp_path / "lead-1.system-prompt.md").write_text(f"You are `lead-1` (pubkey `{'ab' * 32}`).\n", encoding="utf-8")
    (tmp_path / "receipts.jsonl").write_text(json.dumps({"x": "cd" * 32}) + "\n", encoding="utf-8")
    scan = scan_bundle(tmp_path, ["too-short"])
    assert scan.clean is True
    assert scan.to_json() == {
        "clean": True,
        "findings": [],
        "review": [{"path": "lead-1.system-prompt.md", "line": 1, "kind": "hex-64"}],
    }


def test_one_finding_per_line_per_kind_and_seed_ordering(tmp_path: Path) -> None:
    text = f"{TRIAL_KEY} {TRIAL_KEY} {PLANTED['openai-key']} {'ef' * 32}\n"
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    scan = scan_bundle(tmp_path, [TRIAL_KEY])
    assert [f.kind for f in scan.findings] == ["trial-credential", "openai-key"]
    assert [f.kind for f in scan.review] == ["hex-64"]


def test_bearer_split_across_lines_is_not_a_finding(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("Authorization:\nBearer abcdefghijklmnopqrstuvwxyz\n", encoding="utf-8")
    assert scan_bundle(tmp_path).clean


def _seed_scan(root: Path, secrets: list[str]) -> list[tuple[str, int, str]]:
    """The seed's per-line algorithm, as a reference for the chunked one."""
    literals = tuple(sorted({s for s in secrets if len(s) >= 16}))
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in SCANNED_SUFFIXES:
            continue
        relative = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if any(literal in line for literal in literals):
                out.append((relative, number, "trial-credential"))
            for kind, pattern in SECRET_PATTERNS:
                if not (kind == "hex-64" and path.name in HEX_ALLOWED_FILES) and pattern.search(line):
                    out.append((relative, number, kind))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_chunked_scan_matches_the_per_line_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(secret_scan, "iter_line_chunks", partial(iter_line_chunks, chunk_bytes=7))
    rng = random.Random(seed)
    tokens = [
        *PLANTED.values(), "Authorization:\nBearer " + "y" * 20, "ab" * 32, TRIAL_KEY, "\n", "\r", "\r\n",
        " x ", "\x85", "é", "\x0b", "\u2028", "\x00", "A" * 64, "f" * 65, "NſEC1" + "q" * 21, "DAPİ" + "0" * 32,
    ]  # fmt: skip
    for name in ("a.log", "manifest.json", "B.TXT", "c.bin"):
        text = "".join(rng.choice(tokens) for _ in range(rng.randint(0, 30)))
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
    scan = scan_bundle(tmp_path, [TRIAL_KEY])
    expected = _seed_scan(tmp_path, [TRIAL_KEY])
    got = [(f.path, f.line, f.kind) for f in scan.findings] + [(f.path, f.line, f.kind) for f in scan.review]
    assert got == [e for e in expected if e[2] != "hex-64"] + [e for e in expected if e[2] == "hex-64"]


def test_unreadable_file_makes_the_scan_not_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.log").write_text("fine\n", encoding="utf-8")
    (tmp_path / "b.log").write_text("fine\n", encoding="utf-8")

    def flaky(path: Path, chunk_bytes: int = 1 << 20):
        if path.name == "b.log":
            raise PermissionError(13, "Permission denied")
        return iter_line_chunks(path, chunk_bytes)

    monkeypatch.setattr(secret_scan, "iter_line_chunks", flaky)
    scan = scan_bundle(tmp_path)
    assert scan.clean is False and scan.findings == ()
    assert scan.to_json()["unreadable"] == ["b.log: Permission denied"]
    assert SecretScan.from_json(json.loads(json.dumps(scan.to_json()))) == scan
