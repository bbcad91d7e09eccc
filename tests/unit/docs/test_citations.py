"""Every section a comment, docstring or doc cites exists in the repository.

Code cites the project's own docs as `docs/<file>.md#<section>`; a doc cites another as a
relative link. Both are checked against the headings of the file they name (GitHub's anchor
rule), and no file may cite the reference brief the project was built from (`buzz-harness.md`,
bare `§4.4` section numbers), which is not in the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("operator", "tests", "bench", "hack", "charts", "tasks", "docs", "images", "manifests")
SUFFIXES = {".py", ".md", ".sh", ".yaml", ".yml", ".toml", ".sql", ".tpl", ".txt"}
CITATION = re.compile(r"docs/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?")
DOC_LINK = re.compile(r"\]\(([a-z0-9./-]+\.md)(?:#([a-z0-9-]+))?\)")
BRIEF = re.compile(r"buzz-harness\.md|(?<![A-Za-z0-9 ])§ ?[0-9]|(?<=[ (])§[0-9]")
# section signs that cite a standard, not the brief
STANDARDS = re.compile(r"RFC \d+ §")


def files() -> list[Path]:
    found = [ROOT / "README.md"]
    for top in SCANNED:
        found += [p for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in SUFFIXES
                  and "__pycache__" not in p.parts and not any(part.endswith(".egg-info") for part in p.parts)]
    return [p for p in found if p != Path(__file__).resolve()]


def anchors(doc: Path) -> set[str]:
    """GitHub's heading anchors: lowercased, punctuation dropped, spaces to hyphens."""
    out: set[str] = set()
    for line in doc.read_text().splitlines():
        if heading := re.match(r"#{1,6} (.+)", line):
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            out.add(text.replace(" ", "-"))
    return out


def cited(path: Path) -> list[tuple[int, Path, str | None]]:
    out = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        for match in CITATION.finditer(line):
            out.append((number, ROOT / "docs" / match.group(1), match.group(2)))
        if path.suffix == ".md":
            for match in DOC_LINK.finditer(line):
                target = (path.parent / match.group(1)).resolve()
                if target.is_relative_to(ROOT / "docs") or target.parent == ROOT:
                    out.append((number, target, match.group(2)))
    return out


def test_every_cited_section_exists() -> None:
    missing = []
    for path in files():
        for number, doc, anchor in cited(path):
            where = f"{path.relative_to(ROOT)}:{number}"
            if not doc.is_file():
                missing.append(f"{where}: {doc.relative_to(ROOT)} does not exist")
            elif anchor and anchor not in anchors(doc):
                missing.append(f"{where}: {doc.relative_to(ROOT)} has no section #{anchor}")
    assert missing == []


def test_nothing_cites_the_brief() -> None:
    cites = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:90]}"
             for path in files()
             for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
             if BRIEF.search(STANDARDS.sub("", line))]
    assert cites == []


@pytest.mark.parametrize(("heading", "anchor"), [
    ("## result.json", "resultjson"), ("### The agent environment", "the-agent-environment"),
    ("## Log lines (ANSI stripped)", "log-lines-ansi-stripped"),
])
def test_anchor_rule(tmp_path: Path, heading: str, anchor: str) -> None:
    doc = tmp_path / "d.md"
    doc.write_text(f"{heading}\n")
    assert anchor in anchors(doc)
