"""Files in and out of a container as tar streams over exec (the seed's upload_file and
download_dir). Uploads are built in memory; downloads are unpacked in memory and written
only as regular files under the destination, so a hostile container cannot plant links or
write outside it (tar path traversal)."""

from __future__ import annotations

import io
import posixpath
import shlex
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from buzz_operator.kube import exec as kexec
from buzz_operator.kube.client import Kube


class TarError(RuntimeError):
    """The container could not pack or unpack a tar stream."""


def pack(files: Mapping[str, bytes | tuple[bytes, int]]) -> bytes:
    """A tar of `{relative path: content}` (or `(content, mode)`); default mode 0644."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, entry in sorted(files.items()):
            content, mode = entry if isinstance(entry, tuple) else (entry, 0o644)
            info = tarfile.TarInfo(_safe_name(name))
            info.size, info.mode = len(content), mode
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _safe_name(name: str) -> str:
    clean = posixpath.normpath(name.lstrip("/"))
    if clean in ("", ".") or clean.startswith("../") or clean == "..":
        raise TarError(f"refusing path {name!r}")
    return clean


def unpack(data: bytes) -> dict[str, bytes]:
    """Regular files of a tar stream; links, devices and escaping paths are skipped."""
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in archive:
            if not member.isfile():
                continue
            try:
                name = _safe_name(member.name)
            except TarError:
                continue
            handle = archive.extractfile(member)
            if handle is not None:
                out[name] = handle.read()
    return out


# exits a script that unpacks before it runs (unpack_script(..., then_exit=True)) when the
# unpacking failed: an exit code no shell builtin or timeout(1) gives
UNPACK_FAILED_EXIT = 97


def unpack_script(destination: str, *, then_exit: bool = False) -> str:
    """The shell that unpacks the exec's stdin payload (kube.exec.wrap) into `destination`;
    with `then_exit`, a line that exits UNPACK_FAILED_EXIT when it failed, so a script can follow."""
    dest = shlex.quote(destination)
    script = f'mkdir -p {dest} && head -c "$BUZZ_STDIN_BYTES" | tar -x -o -f - -C {dest}'
    return f"{{ {script}; }} || exit {UNPACK_FAILED_EXIT}\n" if then_exit else script


async def upload(
    kube: Kube, namespace: str, pod: str, container: str, destination: str, archive: bytes, *, timeout_s: float
) -> None:
    """Unpack `archive` into `destination` (created) inside the container."""
    script = unpack_script(destination)
    result = await kexec.run(kube, namespace, pod, container, script, stdin=archive, timeout_s=timeout_s)
    if not result.ok:
        raise TarError(f"upload to {destination} failed ({result.exit_code}): {result.stderr[-500:]!r}")


async def download(
    kube: Kube, namespace: str, pod: str, container: str, source: str, *, timeout_s: float
) -> dict[str, bytes]:
    """The regular files under `source` in the container, by path relative to it; {} if absent."""
    src = shlex.quote(source)
    script = f"if [ -d {src} ]; then tar -c -f - -C {src} .; fi"
    result = await kexec.run(kube, namespace, pod, container, script, timeout_s=timeout_s)
    if not result.ok:
        raise TarError(f"download of {source} failed ({result.exit_code}): {result.stderr[-500:]!r}")
    return unpack(result.stdout) if result.stdout else {}


async def download_many(
    kube: Kube, namespace: str, pod: str, container: str, sources: Sequence[str], *, timeout_s: float
) -> dict[str, dict[str, bytes]]:
    """`download` of several absolute directories in one exec (one tar rooted at /): by source,
    the regular files under it by path relative to it; {} for a source that is absent."""
    wanted = [posixpath.normpath(source).lstrip("/") for source in sources]
    listed = " ".join(shlex.quote(w) for w in wanted)
    script = f'set --; for d in {listed}; do [ -d "/$d" ] && set -- "$@" "$d"; done; ' \
             '[ "$#" -eq 0 ] || tar -c -f - -C / "$@"'
    result = await kexec.run(kube, namespace, pod, container, script, timeout_s=timeout_s)
    if not result.ok:
        raise TarError(f"download of {', '.join(sources)} failed ({result.exit_code}): {result.stderr[-500:]!r}")
    return split_by_source(unpack(result.stdout) if result.stdout else {}, sources)


def split_by_source(files: Mapping[str, bytes], sources: Sequence[str]) -> dict[str, dict[str, bytes]]:
    """A tar rooted at / unpacked, back into one `{relative path: content}` per source directory."""
    left = dict(files)
    out: dict[str, dict[str, bytes]] = {source: {} for source in sources}
    # the longest source first, so a file under a nested source is not also its parent's
    for source in sorted(sources, key=lambda s: -len(posixpath.normpath(s))):
        root = posixpath.normpath(source).lstrip("/")
        for name in [n for n in left if n.startswith(root + "/")]:
            out[source][name[len(root) + 1:]] = left.pop(name)
    return out


def write_tree(files: Mapping[str, bytes], root: Path) -> list[Path]:
    """Write unpacked files under `root` (names were made safe by unpack)."""
    written = []
    for name, content in sorted(files.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    return written
