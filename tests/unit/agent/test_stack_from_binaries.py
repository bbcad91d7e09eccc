"""`make stack-image`'s staging (buzz_operator.dev.stack.from_binaries): a folder of Linux binaries
becomes a folder-layout stack tree, sprig's names linked to it; anything that could not run in a
Linux task container is refused naming the file, before anything is built."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from buzz_operator.dev.stack.from_binaries import StackFolderError, main, stage
from buzz_operator.pod.stack_install import SPRIG_LINKS

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def elf(*, machine: int = 62, interp: bool = False, bits: int = 2) -> bytes:
    """A minimal ELF64 executable header with one program header (PT_INTERP: dynamically linked)."""
    header = struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", bits, 1, 1, 0, 0, b"\0" * 7, 2, machine, 1,
                         0x401000, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    program = struct.pack("<IIQQQQQQ", 3 if interp else 1, 5, 0, 0, 0, 0, 0, 0x1000)
    return header + program + b"\0" * 64


@pytest.fixture
def ca(tmp_path: Path) -> Path:
    path = tmp_path / "ca.pem"
    path.write_bytes(PEM)
    return path


def _folder(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root


def test_sprig_alone_gets_every_name_linked(tmp_path: Path, ca: Path) -> None:
    bins = _folder(tmp_path / "bins", {"sprig": elf()})
    staged = stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64")
    out = tmp_path / "out" / "bin"
    assert (out / "sprig").read_bytes() == elf() and (out / "sprig").stat().st_mode & 0o777 == 0o755
    for name in SPRIG_LINKS:
        assert (out / name).is_symlink() and str((out / name).readlink()) == "sprig", name
    assert staged.files["buzz-acp"] == "link -> sprig" and staged.warnings == []
    assert (tmp_path / "out" / "ca-certificates.crt").read_bytes() == PEM


def test_sprigs_own_links_stay_links_and_separate_binaries_are_copied(tmp_path: Path, ca: Path) -> None:
    bins = _folder(tmp_path / "bins", {"sprig": elf(), "rg": elf()})  # rg: a binary of its own
    (bins / "buzz-acp").symlink_to("sprig")
    staged = stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64")
    assert staged.files["rg"] == "binary" and staged.files["buzz-acp"] == "link -> sprig"


def test_separate_binaries_without_sprig(tmp_path: Path, ca: Path) -> None:
    bins = _folder(tmp_path / "bins", {name: elf() for name in ("buzz-acp", "buzz-agent", "buzz-dev-mcp", "buzz")})
    staged = stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64")
    assert staged.files == dict.fromkeys(("buzz", "buzz-acp", "buzz-agent", "buzz-dev-mcp"), "binary")
    assert not (tmp_path / "out" / "bin" / "rg").exists()


def test_a_missing_companion_and_a_dynamic_binary_are_warnings(tmp_path: Path, ca: Path) -> None:
    bins = _folder(tmp_path / "bins", {"buzz-acp": elf(interp=True)})
    staged = stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64")
    assert any("buzz-acp is dynamically linked" in w for w in staged.warnings)
    assert any("no buzz-agent, buzz-dev-mcp, buzz" in w for w in staged.warnings)


@pytest.mark.parametrize(("files", "said"), [
    ({"buzz-acp": b"\xcf\xfa\xed\xfe" + b"\0" * 60}, "buzz-acp: is a macOS (Mach-O) binary"),
    ({"buzz-acp": b"MZ" + b"\0" * 62}, "is a Windows executable"),
    ({"buzz-acp": elf(machine=183)}, "is built for aarch64, not x86_64"),
    ({"buzz-acp": elf(bits=1)}, "is a 32-bit ELF"),
    ({"buzz-acp": b"just text\n"}, "is not an ELF executable"),
    ({"buzz-agent": elf()}, "no buzz-acp (nor a sprig to link it to)"),
], ids=["mach-o", "windows", "arch", "32-bit", "text", "no-buzz-acp"])
def test_what_cannot_run_in_a_linux_task_container_is_refused_by_name(
    tmp_path: Path, ca: Path, files: dict[str, bytes], said: str
) -> None:
    bins = _folder(tmp_path / "bins", files)
    with pytest.raises(StackFolderError, match=said.replace("(", r"\(").replace(")", r"\)")):
        stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64")
    assert not (tmp_path / "out").exists()  # nothing staged


def test_a_script_is_accepted(tmp_path: Path, ca: Path) -> None:
    bins = _folder(tmp_path / "bins", {"sprig": b"#!/bin/sh\necho sprig\n"})
    assert stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64").files["sprig"] == "binary"


def test_a_bad_folder_or_ca_bundle_is_refused(tmp_path: Path, ca: Path) -> None:
    with pytest.raises(StackFolderError, match="not a directory"):
        stage(tmp_path / "nowhere", tmp_path / "out", ca_bundle=ca)
    bins = _folder(tmp_path / "bins", {"buzz-acp": elf()})
    (bins / "lib").mkdir()
    with pytest.raises(StackFolderError, match="a directory; the stack's bin/ is flat"):
        stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64")
    (bins / "lib").rmdir()
    (tmp_path / "not-pem").write_text("hello\n")
    with pytest.raises(StackFolderError, match="BUZZ_CA_BUNDLE"):
        stage(bins, tmp_path / "out", ca_bundle=tmp_path / "not-pem", arch="x86_64")
    (bins / "dangling").symlink_to("/nowhere")
    with pytest.raises(StackFolderError, match="dangling: a link to /nowhere, which is not a file"):
        stage(bins, tmp_path / "out", ca_bundle=ca, arch="x86_64")


def test_the_command_line_says_what_is_wrong_and_exits_1(tmp_path: Path, ca: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nowhere"), str(tmp_path / "out")]) == 1
    assert "error: BUZZ_BIN_DIR" in capsys.readouterr().err
    bins = _folder(tmp_path / "bins", {"sprig": elf()})
    assert main([str(bins), str(tmp_path / "out"), "--ca-bundle", str(ca), "--arch", "x86_64"]) == 0
    assert "bin/buzz-acp: link -> sprig" in capsys.readouterr().err
