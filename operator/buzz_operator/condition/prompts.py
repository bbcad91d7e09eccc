"""Prompt pinning (buzz-harness.md §1.2): a condition names its prompts by sha256.

A persona edited after a sweep started would otherwise change what agents are told while
the condition hash — which only covers the digest — stays the same.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from buzz_operator.condition.errors import ConditionError
from buzz_operator.condition.manifest import ExperimentManifest


def _resolve_inside(artifact_root: Path, relative: str, field: str) -> Path:
    # The operator may mount the artifact root next to other material; a manifest is not
    # allowed to reach outside it (absolute paths, `..`).
    root = artifact_root.resolve()
    candidate = (root / relative).resolve()
    if Path(relative).is_absolute() or not candidate.is_relative_to(root):
        raise ConditionError(f"prompt path {relative!r} is outside the artifact root {root}", field=field)
    return candidate


def verify_prompts(manifest: ExperimentManifest, artifact_root: Path) -> dict[str, bytes]:
    """Read every roster ``prompt`` and check its bytes against the pinned digest.

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
        actual = hashlib.sha256(data).hexdigest()
        if actual != entry.prompt.sha256:
            raise ConditionError(
                f"prompt hash mismatch for {path}: expected {entry.prompt.sha256}, got {actual}",
                field=field,
            )
        prompts[entry.id] = data
    return prompts
