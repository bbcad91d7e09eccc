"""Writes minimal task directories for loader tests."""

from __future__ import annotations

from pathlib import Path

MINIMAL_TOML = 'schema_version = "1.3"\n'


def make_task(
    parent: Path,
    name: str = "demo-task",
    *,
    toml: str | None = MINIMAL_TOML,
    instruction: str | None = "Do the thing.\n",
    tests: bool = True,
    dockerfile: str | None = "FROM python:3.12-slim-bookworm\n",
    extra: dict[str, str] | None = None,
) -> Path:
    """A task directory with each standard part present unless passed as None/False."""
    root = parent / name
    root.mkdir(parents=True)
    if instruction is not None:
        (root / "instruction.md").write_text(instruction)
    if toml is not None:
        (root / "task.toml").write_text(toml)
    if tests:
        (root / "tests").mkdir()
        (root / "tests" / "test.sh").write_text("#!/usr/bin/env bash\necho 1 > /logs/verifier/reward.txt\n")
    if dockerfile is not None:
        (root / "environment").mkdir()
        (root / "environment" / "Dockerfile").write_text(dockerfile)
    for relative, text in (extra or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
