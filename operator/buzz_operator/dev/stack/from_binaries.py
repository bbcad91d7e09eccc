"""Stage a folder-layout stack image's context from a folder of Linux binaries you built yourself
(`make stack-image BUZZ_BIN_DIR=…`, hack/images.sh; docs/stack.md):

    <out>/bin/<every binary of the folder>       symlinks to a binary of the folder kept as links
    <out>/ca-certificates.crt                    the CA bundle agents trust (SSL_CERT_FILE)

The folder holds either Block's multicall `sprig` (its names — buzz-acp, buzz-agent, … — are
linked to it here where the folder has no such file), or separate buzz-acp, buzz-agent,
buzz-dev-mcp and buzz binaries. Nothing is built: the binaries are checked and copied.

The binaries run inside the *task* container, whatever distribution its image is, so each must
be a Linux ELF executable for the node's architecture; a dynamically linked one runs only where
its loader and libraries are (a static, e.g. musl, build runs anywhere), which is said as a warning.

Usage: python -m buzz_operator.dev.stack.from_binaries BIN_DIR OUT [--ca-bundle FILE] [--arch x86_64|aarch64]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from buzz_operator.pod.stack_install import REQUIRED, SPRIG_LINKS, SPRIG_NAME

SYSTEM_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
# ELF e_machine of the architectures a node may run (the image is built for the host's)
MACHINES = {"x86_64": 62, "aarch64": 183}
EXPECTED = ("buzz-acp", "buzz-agent", "buzz-dev-mcp", "buzz")  # the separate-binaries form
PT_INTERP = 3
_MACHO = (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")


class StackFolderError(ValueError):
    """The folder cannot become a stack image; the message says which file and why."""


@dataclass(frozen=True)
class Staged:
    files: dict[str, str]  # name under bin/ -> "binary" | "link -> <target>"
    warnings: list[str]


def _elf_problem(path: Path, machine: int) -> tuple[str | None, bool]:
    """(why it cannot run in a Linux task container or None, whether it is dynamically linked)."""
    with path.open("rb") as handle:
        head = handle.read(64)
        if head[:4] in _MACHO:
            return "is a macOS (Mach-O) binary: build it for Linux (e.g. --target x86_64-unknown-linux-musl)", False
        if head[:2] == b"MZ":
            return "is a Windows executable: build it for Linux", False
        if head[:2] == b"#!":
            return None, False  # a script: its interpreter must be in the task image (as the stand-in's python3)
        if head[:4] != b"\x7fELF" or len(head) < 64:
            return "is not an ELF executable (nor a #! script)", False
        if head[4] != 2:
            return "is a 32-bit ELF: build a 64-bit Linux binary", False
        endian = "<" if head[5] == 1 else ">"
        e_type, e_machine = struct.unpack(f"{endian}HH", head[16:20])
        if e_machine != machine:
            names = {number: name for name, number in MACHINES.items()}
            return (f"is built for {names.get(e_machine, f'ELF machine {e_machine}')}, not "
                    f"{names.get(machine, machine)}: build it for the nodes' architecture"), False
        if e_type not in (2, 3):  # ET_EXEC, ET_DYN (PIE)
            return "is an ELF object or core file, not an executable", False
        phoff, = struct.unpack(f"{endian}Q", head[32:40])
        phentsize, phnum = struct.unpack(f"{endian}HH", head[54:58])
        if phnum == 0 or phentsize < 4:
            return None, False
        handle.seek(phoff)
        table = handle.read(phentsize * phnum)
    kinds = [struct.unpack(f"{endian}I", table[i:i + 4])[0] for i in range(0, len(table) - 3, phentsize)]
    return None, PT_INTERP in kinds


def _entries(bin_dir: Path) -> dict[str, Path]:
    if not bin_dir.is_dir():
        raise StackFolderError(f"BUZZ_BIN_DIR {bin_dir}: not a directory")
    found: dict[str, Path] = {}
    for path in sorted(bin_dir.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir() and not path.is_symlink():
            raise StackFolderError(f"{path}: a directory; the stack's bin/ is flat (put the binaries themselves here)")
        found[path.name] = path
    if not found:
        raise StackFolderError(f"BUZZ_BIN_DIR {bin_dir}: empty")
    return found


def stage(bin_dir: Path, out: Path, *, ca_bundle: Path = SYSTEM_CA_BUNDLE, arch: str | None = None) -> Staged:
    """Check the folder and write the stack context under `out` (replaced if it exists)."""
    arch = arch or platform.machine()
    if arch not in MACHINES:
        raise StackFolderError(f"architecture {arch!r}: one of {', '.join(MACHINES)}")
    entries, warnings = _entries(bin_dir), []
    root = bin_dir.resolve()
    links: dict[str, str] = {}
    binaries: dict[str, Path] = {}
    for name, path in entries.items():
        target = path.resolve()
        if not target.is_file():
            raise StackFolderError(f"{path}: a link to {target}, which is not a file")
        if path.is_symlink() and target.parent == root:
            links[name] = target.name  # sprig's names: kept as links, so the stack ships one copy
            continue
        why, dynamic = _elf_problem(target, MACHINES[arch])
        if why is not None:
            raise StackFolderError(f"{path}: {why}")
        if dynamic:
            warnings.append(f"{name} is dynamically linked: it runs only in task images with its loader and "
                            "libraries; a static (musl) build runs in any")
        binaries[name] = target
    for name, target in links.items():
        if target not in binaries:
            raise StackFolderError(f"{entries[name]}: links to {target}, which is itself a link; link to the binary")
    if SPRIG_NAME in binaries:
        for name in SPRIG_LINKS:
            if name not in binaries and name not in links:
                links[name] = SPRIG_NAME
    if REQUIRED not in binaries and REQUIRED not in links:
        raise StackFolderError(f"BUZZ_BIN_DIR {bin_dir}: no {REQUIRED} (nor a {SPRIG_NAME} to link it to): "
                               "every seat is launched as bin/buzz-acp")
    missing = [name for name in EXPECTED if name not in binaries and name not in links]
    if missing:
        warnings.append(f"no {', '.join(missing)}: a roster that uses them (buzz-agent is the default harness, "
                        "buzz-dev-mcp its MCP server) will fail to launch")
    if not ca_bundle.is_file() or b"BEGIN CERTIFICATE" not in ca_bundle.read_bytes():
        raise StackFolderError(f"CA bundle {ca_bundle}: not a PEM bundle of certificates (BUZZ_CA_BUNDLE)")
    if out.exists():
        shutil.rmtree(out)
    (out / "bin").mkdir(parents=True)
    for name, source in binaries.items():
        shutil.copyfile(source, out / "bin" / name)
        (out / "bin" / name).chmod(0o755)
    for name, target in links.items():
        os.symlink(target, out / "bin" / name)  # relative: it resolves inside /opt/buzz/bin too
    shutil.copyfile(ca_bundle, out / "ca-certificates.crt")
    files = {name: "binary" for name in binaries} | {name: f"link -> {target}" for name, target in links.items()}
    return Staged(files=dict(sorted(files.items())), warnings=warnings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m buzz_operator.dev.stack.from_binaries",
                                     description="Stage a folder-layout stack image context from Linux binaries.")
    parser.add_argument("bin_dir", type=Path, help="folder of Linux binaries: sprig (+ links), or buzz-acp, …")
    parser.add_argument("out", type=Path, help="where the context's stack/ tree goes (replaced)")
    parser.add_argument("--ca-bundle", type=Path, default=SYSTEM_CA_BUNDLE, help="PEM CA bundle for agents")
    parser.add_argument("--arch", choices=sorted(MACHINES), help="the nodes' architecture (default: this host's)")
    args = parser.parse_args(argv)
    try:
        staged = stage(args.bin_dir, args.out, ca_bundle=args.ca_bundle, arch=args.arch)
    except StackFolderError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for warning in staged.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for name, what in staged.files.items():
        print(f"bin/{name}: {what}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
