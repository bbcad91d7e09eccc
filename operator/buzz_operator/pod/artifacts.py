"""task.toml's `artifacts`, collected as Harbor collects them (docs/task-toml.md#artifacts).

Harbor copies each entry out of the agents' container after the agents run and before the
verifier does (``ArtifactHandler.collect_artifacts``), into the trial's ``artifacts/`` directory:
an entry with a ``destination`` at that relative path, any other at its absolute source path
(``/app/out.txt`` → ``artifacts/app/out.txt``), a directory without its ``exclude`` patterns; and
it records every entry in ``artifacts/manifest.json`` (source, destination, type, status). The
operator does the same in two halves: the collect step copies the entries inside the pod into a
staging directory (``stage_script``; the verifier may change the files afterwards, Harbor's copy
predates it too), and the bundle step downloads that directory and lays it out (``place``).

Pure: scripts and file maps.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, Protocol

STAGE_DIR = "/logs/.buzz-artifacts"
ARTIFACTS_DIR = "artifacts"
MANIFEST = "manifest.json"
RECORD = "record.tsv"


class ArtifactLike(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def destination(self) -> str | None: ...
    @property
    def exclude(self) -> list[str]: ...


def stage_script(entries: Sequence[ArtifactLike], stage: str = STAGE_DIR) -> str:
    """Copy each entry to <stage>/<n>/ and write one ``<n>\\t<type>\\t<status>`` line per entry
    into <stage>/record.tsv: ``directory``/``file``, ``ok``/``empty``/``failed``."""
    stage = shlex.quote(stage)
    lines = [f"rm -rf {stage} && mkdir -p {stage}", f": > {stage}/{RECORD}"]
    for index, entry in enumerate(entries):
        source, target = shlex.quote(entry.source), f"{stage}/{index}"
        excludes = " ".join(f"--exclude={shlex.quote(pattern)}" for pattern in entry.exclude)
        lines.append(
            f"if [ -d {source} ]; then mkdir -p {target}/d && "
            f"if tar -C {source} -cf - {excludes} . | tar -C {target}/d -xf -; then "
            f"if [ -n \"$(ls -A {target}/d)\" ]; then s=ok; else s=empty; fi; else s=failed; fi; "
            f"printf '%s\\tdirectory\\t%s\\n' {index} \"$s\" >> {stage}/{RECORD}; "
            f"elif [ -f {source} ]; then mkdir -p {target} && "
            f"if cp {source} {target}/f; then s=ok; else s=failed; fi; "
            f"printf '%s\\tfile\\t%s\\n' {index} \"$s\" >> {stage}/{RECORD}; "
            f"else printf '%s\\tfile\\tfailed\\n' {index} >> {stage}/{RECORD}; fi"
        )
    return "\n".join(lines)


def host_path(entry: ArtifactLike) -> str:
    """Where Harbor puts the entry under artifacts/ (``artifact_host_path``)."""
    if entry.destination:
        return "/".join(p for p in PurePosixPath(entry.destination).parts if p not in ("", "/", ".."))
    return "/".join(p for p in PurePosixPath(entry.source).parts if p not in ("", "/", ".."))


def place(entries: Sequence[ArtifactLike], staged: Mapping[str, bytes]) -> dict[str, bytes]:
    """The trial's ``artifacts/`` files (relative to it), manifest.json included, from the staging
    directory's files (relative to STAGE_DIR). An entry the stage script did not record — the
    collect step never ran, as when the agents' pod was lost — is ``skipped``."""
    recorded: dict[int, tuple[str, str]] = {}
    for line in staged.get(RECORD, b"").decode(errors="replace").splitlines():
        index, kind, status = [*line.split("\t"), "", "", ""][:3]
        if index.isdigit():
            recorded[int(index)] = (kind, status)
    files: dict[str, bytes] = {}
    manifest: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        kind, status = recorded.get(index, ("directory" if not PurePosixPath(entry.source).suffix else "file",
                                            "skipped"))  # fmt: skip
        target = host_path(entry)
        prefix = f"{index}/d/" if kind == "directory" else f"{index}/f"
        for name, data in staged.items():
            if kind == "directory" and name.startswith(prefix):
                files[f"{target}/{name.removeprefix(prefix)}"] = data
            elif kind == "file" and name == prefix:
                files[target] = data
        manifest.append({"source": entry.source, "destination": target, "type": kind, "status": status,
                         "service": None, "exclude": list(entry.exclude)})  # fmt: skip
    if entries:
        files[MANIFEST] = (json.dumps(manifest, indent=2) + "\n").encode()
    return files
