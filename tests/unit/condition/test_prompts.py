"""Prompt pinning (docs/condition.md#prompts): the bytes on disk must match the manifest's digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from buzz_operator.condition import ConditionError, ExperimentManifest, verify_prompt_files, verify_prompts


def _write(root: Path, relative: str, data: bytes) -> str:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _pin(manifest: dict, index: int, relative: str, digest: str) -> None:
    manifest["roster"][index]["prompt"] = {"path": relative, "sha256": digest}


def test_returns_bytes_by_class(tmp_path: Path, team: dict) -> None:
    _pin(team, 0, "personas/lead.md", _write(tmp_path, "personas/lead.md", b"lead\r\n"))
    digest = _write(tmp_path, "personas/worker.md", "worker — ü\n".encode())
    _pin(team, 1, "personas/worker.md", digest)
    _pin(team, 2, "personas/worker.md", digest)
    prompts = verify_prompts(ExperimentManifest.load(team), tmp_path)
    assert prompts == {
        "lead": b"lead\r\n",
        "worker": "worker — ü\n".encode(),
        "critic": "worker — ü\n".encode(),
    }


def test_mismatch_names_file_and_both_digests(tmp_path: Path, solo: dict) -> None:
    actual = _write(tmp_path, "personas/solo.md", b"edited after pinning\n")
    expected = hashlib.sha256(b"original\n").hexdigest()
    _pin(solo, 0, "personas/solo.md", expected)
    with pytest.raises(ConditionError) as caught:
        verify_prompts(ExperimentManifest.load(solo), tmp_path)
    message = str(caught.value)
    assert caught.value.field == "roster.0.prompt"
    assert "prompt hash mismatch for" in message
    assert str(tmp_path / "personas/solo.md") in message
    assert f"expected {expected}, got {actual}" in message


def test_unreadable_file(tmp_path: Path, solo: dict) -> None:
    _pin(solo, 0, "personas/missing.md", "ab" * 32)
    with pytest.raises(ConditionError) as caught:
        verify_prompts(ExperimentManifest.load(solo), tmp_path)
    assert "cannot read prompt" in str(caught.value)
    assert "personas/missing.md" in str(caught.value)
    assert caught.value.field == "roster.0.prompt"


def test_directory_is_unreadable_as_prompt(tmp_path: Path, solo: dict) -> None:
    (tmp_path / "personas").mkdir()
    _pin(solo, 0, "personas", "ab" * 32)
    with pytest.raises(ConditionError, match="cannot read prompt"):
        verify_prompts(ExperimentManifest.load(solo), tmp_path)


@pytest.mark.parametrize("escape", ["../secret.md", "/etc/passwd", "personas/../../x.md"])
def test_paths_may_not_leave_the_artifact_root(tmp_path: Path, solo: dict, escape: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _pin(solo, 0, escape, "ab" * 32)
    with pytest.raises(ConditionError, match="outside the artifact root"):
        verify_prompts(ExperimentManifest.load(solo), root)


def test_one_byte_difference_is_caught(tmp_path: Path, solo: dict) -> None:
    digest = _write(tmp_path, "p.md", b"exact bytes\n")
    _pin(solo, 0, "p.md", digest)
    manifest = ExperimentManifest.load(solo)
    assert verify_prompts(manifest, tmp_path) == {"solo": b"exact bytes\n"}
    (tmp_path / "p.md").write_bytes(b"exact bytes \n")
    with pytest.raises(ConditionError, match="hash mismatch"):
        verify_prompts(manifest, tmp_path)


def test_in_memory_files(solo: dict, team: dict) -> None:
    _pin(solo, 0, "personas/./solo.md", hashlib.sha256(b"solo\n").hexdigest())
    manifest = ExperimentManifest.load(solo)
    assert verify_prompt_files(manifest, {"personas/solo.md": b"solo\n", "other.md": b"x"}) == {
        "solo": b"solo\n"
    }
    with pytest.raises(ConditionError) as caught:
        verify_prompt_files(manifest, {"personas/solo.md": b"solo \n"})
    assert caught.value.field == "roster.0.prompt"
    assert "prompt hash mismatch for personas/./solo.md" in str(caught.value)


def test_in_memory_missing_file_lists_what_exists(solo: dict) -> None:
    with pytest.raises(ConditionError) as caught:
        verify_prompt_files(ExperimentManifest.load(solo), {"personas/lead.md": b""})
    assert "'personas/solo.md' is not among the condition's files (['personas/lead.md'])" in str(caught.value)


@pytest.mark.parametrize("escape", ["../x.md", "/abs.md", "a/../../x.md"])
def test_in_memory_paths_stay_inside(solo: dict, escape: str) -> None:
    _pin(solo, 0, escape, "ab" * 32)
    with pytest.raises(ConditionError, match="outside the condition's files") as caught:
        verify_prompt_files(ExperimentManifest.load(solo), {"x.md": b""})
    assert caught.value.field == "roster.0.prompt"
