"""task.toml's artifacts collected as Harbor lays them out (pod/artifacts.py): the staging script
run by a real shell on a scratch tree, then placed under artifacts/ with Harbor's manifest."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from buzz_operator.dataset.config import ArtifactSection
from buzz_operator.pod.artifacts import MANIFEST, place, stage_script


def _staged(stage: Path) -> dict[str, bytes]:
    return {p.relative_to(stage).as_posix(): p.read_bytes() for p in stage.rglob("*") if p.is_file()}


def test_files_directories_excludes_and_failures(tmp_path: Path) -> None:
    box = tmp_path / "box"
    (box / "out" / "cache").mkdir(parents=True)
    (box / "out" / "report.txt").write_text("42\n")
    (box / "out" / "cache" / "big.bin").write_text("x")
    (box / "empty").mkdir()
    (box / "answer.txt").write_text("yes\n")
    entries = [
        ArtifactSection(source=f"{box}/out", exclude=["cache"]),
        ArtifactSection(source=f"{box}/answer.txt", destination="final/answer.txt"),
        ArtifactSection(source=f"{box}/empty"),
        ArtifactSection(source=f"{box}/missing.txt"),
    ]
    stage = tmp_path / "stage"
    subprocess.run(["sh", "-c", stage_script(entries, str(stage))], check=True)
    files = place(entries, _staged(stage))
    rel = str(box).lstrip("/")
    assert files[f"{rel}/out/report.txt"] == b"42\n" and f"{rel}/out/cache/big.bin" not in files
    assert files["final/answer.txt"] == b"yes\n"
    manifest = json.loads(files[MANIFEST])
    assert [(e["destination"], e["type"], e["status"]) for e in manifest] == [
        (f"{rel}/out", "directory", "ok"), ("final/answer.txt", "file", "ok"),
        (f"{rel}/empty", "directory", "empty"), (f"{rel}/missing.txt", "file", "failed")]
    assert manifest[0]["exclude"] == ["cache"] and manifest[0]["service"] is None


def test_entries_the_collect_step_never_staged_are_skipped() -> None:
    entries = [ArtifactSection(source="/app/out"), ArtifactSection(source="/app/x.txt")]
    manifest = json.loads(place(entries, {})[MANIFEST])
    assert [(e["type"], e["status"]) for e in manifest] == [("directory", "skipped"), ("file", "skipped")]
    assert place([], {}) == {}
