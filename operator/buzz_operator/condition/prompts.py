"""Prompt pinning (docs/condition.md#prompts): a condition names its prompts by sha256.

A persona edited after a sweep started would otherwise change what agents are told while
the condition hash — which only covers the digest — stays the same. Prompts come either
from a directory (the artifact root) or from an in-memory file set (a ConfigMap's data).
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Mapping
from pathlib import Path

from buzz_operator.condition.errors import ConditionError
from buzz_operator.condition.manifest import ArtifactRef, ExperimentManifest


def _check_digest(ref: ArtifactRef, data: bytes, where: str, field: str) -> bytes:
    actual = hashlib.sha256(data).hexdigest()
    if actual != ref.sha256:
        raise ConditionError(
            f"prompt hash mismatch for {where}: expected {ref.sha256}, got {actual}", field=field
        )
    return data


def _resolve_inside(artifact_root: Path, relative: str, field: str) -> Path:
    # The operator may mount the artifact root next to other material; a manifest is not
    # allowed to reach outside it (absolute paths, `..`).
    root = artifact_root.resolve()
    candidate = (root / relative).resolve()
    if Path(relative).is_absolute() or not candidate.is_relative_to(root):
        raise ConditionError(f"prompt path {relative!r} is outside the artifact root {root}", field=field)
    return candidate


def verify_prompts(manifest: ExperimentManifest, artifact_root: Path) -> dict[str, bytes]:
    """Read every roster ``prompt`` under ``artifact_root`` and check it against its pin.

    Returns ``{class_id: prompt bytes}``. Only ``prompt`` is verified, as in the seed
    harness: ``persona`` and ``skills`` are never read by the runtime.
    """
    prompts: dict[str, bytes] = {}
    for index, entry in enumerate(manifest.roster):
        field = f"roster.{index}.prompt"
        path = _resolve_inside(Path(artifact_root), entry.prompt.path, field)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise ConditionError(
                f"cannot read prompt {path}: {error.strerror or error}", field=field, source=str(path)
            ) from error
        prompts[entry.id] = _check_digest(entry.prompt, data, str(path), field)
    return prompts


def prompt_key(relative: str) -> str:
    """The normalised relative path a prompt is looked up by in an in-memory file set."""
    normalised = posixpath.normpath(relative)
    if posixpath.isabs(normalised) or normalised == ".." or normalised.startswith("../"):
        raise ConditionError(f"prompt path {relative!r} is outside the condition's files")
    return normalised


def verify_prompt_files(manifest: ExperimentManifest, files: Mapping[str, bytes]) -> dict[str, bytes]:
    """Like :func:`verify_prompts`, for prompts already in memory, keyed by relative path.

    ``files`` keys are paths relative to the artifact root (``personas/solo.md``), e.g.
    decoded from a ConfigMap; keys are normalised the same way as manifest paths.
    """
    available = {prompt_key(key): data for key, data in files.items()}
    prompts: dict[str, bytes] = {}
    for index, entry in enumerate(manifest.roster):
        field = f"roster.{index}.prompt"
        try:
            key = prompt_key(entry.prompt.path)
        except ConditionError as error:
            raise ConditionError(error.reason, field=field) from None
        if key not in available:
            raise ConditionError(
                f"prompt {entry.prompt.path!r} is not among the condition's files ({sorted(available)})",
                field=field,
            )
        prompts[entry.id] = _check_digest(entry.prompt, available[key], entry.prompt.path, field)
    return prompts
