"""Content digests of task directories.

The digest is the identity of a task version: it goes into trial records (like Harbor's
`task_checksum`) and, for environment/, into image tags. It must be identical on every machine
that holds the same files, so it hashes only relative POSIX paths and bytes — never mtimes,
owners or permission bits (git and tar do not preserve those faithfully).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

# Bytecode caches appear when a verifier is run locally and differ per interpreter; they are
# not part of the task.
_IGNORED_DIRS = frozenset({"__pycache__"})
_IGNORED_SUFFIXES = (".pyc", ".pyo")


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part in _IGNORED_DIRS for part in relative.parts):
            continue
        if path.is_file() and not path.name.endswith(_IGNORED_SUFFIXES):
            yield relative.as_posix(), path


def tree_digest(root: Path) -> str:
    """sha256 hex over (relative path, size, bytes) of every file under ``root``, sorted by path.

    A missing directory hashes like an empty one, so a task without environment/ (it names a
    prebuilt docker_image instead) still has a well-defined env digest.
    """
    sha = hashlib.sha256()
    if not root.is_dir():
        return sha.hexdigest()
    for relative, path in sorted(_files(root)):
        data = path.read_bytes()
        # Length-prefixing path and content keeps ("a", "bc") and ("ab", "c") distinct.
        encoded = relative.encode("utf-8")
        sha.update(len(encoded).to_bytes(8, "big") + encoded)
        sha.update(len(data).to_bytes(8, "big") + data)
    return sha.hexdigest()
