"""The stack's install scripts per layout, and the digests manifest they leave (pod/stack_install.py).

The install itself runs on a real kubelet in tests/integration/pod/test_stack_layouts.py; here
the scripts are read for what they do, and the manifest step runs in a scratch directory with
this machine's coreutils (the folder images' own).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from buzz_operator.api.stack import StackLayout, StackSource, stack_record
from buzz_operator.condition.paths import REMOTE_ROOT
from buzz_operator.pod.stack_install import (
    SPRIG_LINKS,
    STACK_MANIFEST,
    WRITE_MANIFEST,
    ManifestError,
    install_command,
    manifest_digest,
    parse_manifest,
    render_manifest,
)

SPRIG = StackSource(image="ghcr.io/block/sprig:1", layout=StackLayout.SPRIG)
FOLDER = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER)


def test_sprig_installs_the_multicall_binary_with_every_name_linked_and_the_system_ca_bundle() -> None:
    script = install_command(SPRIG)
    assert "cp /usr/local/bin/sprig /opt/buzz/bin/sprig && chmod 0755 /opt/buzz/bin/sprig" in script
    assert f"for name in {' '.join(SPRIG_LINKS)}; do ln -sf sprig /opt/buzz/bin/$name" in script
    assert SPRIG_LINKS == ("buzz-acp", "buzz-agent", "buzz-dev-mcp", "buzz", "rg", "tree", "git-credential-nostr",
                           "git-sign-nostr")
    assert "cp /etc/ssl/certs/ca-certificates.crt /opt/buzz/ca-certificates.crt" in script
    assert "/stack/" not in script


def test_sprig_binary_path_is_configurable_and_quoted() -> None:
    script = install_command(SPRIG.model_copy(update={"binary_path": "/opt/sprig/bin/sprig"}))
    assert "cp /opt/sprig/bin/sprig /opt/buzz/bin/sprig" in script
    assert "no /opt/sprig/bin/sprig in image ghcr.io/block/sprig:1 (spec.stack.binaryPath)" in script


def test_folder_copies_the_stack_tree_as_it_is() -> None:
    script = install_command(FOLDER)
    assert "cp -R /stack/. /opt/buzz/" in script
    assert "ln -sf" not in script and "/usr/local/bin/sprig" not in script


@pytest.mark.parametrize("source", [SPRIG, FOLDER], ids=["sprig", "folder"])
def test_every_layout_refuses_a_stack_without_buzz_acp_then_writes_the_manifest_and_the_writable_dirs(
    source: StackSource,
) -> None:
    script = install_command(source)
    refuse, manifest, dirs = (script.index("[ -x /opt/buzz/bin/buzz-acp ]"), script.index(WRITE_MANIFEST),
                              script.index("chmod 0777 /opt/buzz/logs /opt/buzz/prompts"))
    assert refuse < manifest < dirs  # nothing is listed for a stack the install refused


def _write_manifest(root: Path) -> str:
    # the very snippet the init container runs, pointed at a scratch /opt/buzz
    subprocess.run(["sh", "-c", WRITE_MANIFEST.replace(REMOTE_ROOT, str(root))], check=True)
    return (root / "stack-digests.txt").read_text()


def test_the_manifest_resolves_links_sorts_by_path_and_its_digest_is_sha256sum_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "sprig").write_bytes(b"#!/bin/sh\necho multicall\n")
    for name in ("buzz-acp", "buzz"):
        (tmp_path / "bin" / name).symlink_to("sprig")
    (tmp_path / "ca-certificates.crt").write_text("not under bin/: not listed\n")
    text = _write_manifest(tmp_path)
    sprig = hashlib.sha256(b"#!/bin/sh\necho multicall\n").hexdigest()
    assert text == f"{sprig}  bin/buzz\n{sprig}  bin/buzz-acp\n{sprig}  bin/sprig\n"
    digests = parse_manifest(text)
    assert digests.binaries == {"buzz": sprig, "buzz-acp": sprig, "sprig": sprig}
    assert digests.digest == hashlib.sha256(text.encode()).hexdigest() == manifest_digest(digests.binaries)


def test_a_dangling_link_fails_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "buzz-acp").symlink_to("/nowhere/sprig")
    result = subprocess.run(["sh", "-c", WRITE_MANIFEST.replace(REMOTE_ROOT, str(tmp_path))], capture_output=True)
    assert result.returncode != 0 and not (tmp_path / "stack-digests.txt").exists()


def test_one_changed_binary_is_another_stack() -> None:
    one = {"buzz-acp": "a" * 64, "buzz": "b" * 64}
    assert manifest_digest(one) != manifest_digest({**one, "buzz-acp": "c" * 64})
    assert manifest_digest(one) == manifest_digest(dict(reversed(one.items())))  # order-free


@pytest.mark.parametrize(("text", "said"), [
    ("", "lists no file under bin/"),
    ("a" * 64 + "  lib/x\n", "line 1"),
    ("A" * 64 + "  bin/buzz\n", "line 1"),
    ("a" * 64 + " bin/buzz\n", "line 1"),
    ("\\" + "a" * 64 + "  bin/new\\nline\n", "line 1"),
])
def test_a_manifest_not_written_by_the_install_is_refused(text: str, said: str) -> None:
    with pytest.raises(ManifestError, match=said) as caught:
        parse_manifest(text)
    assert STACK_MANIFEST in str(caught.value)


def test_the_record_says_image_layout_digest_and_binaries() -> None:
    digests = parse_manifest(render_manifest({"buzz-acp": "a" * 64}))
    assert stack_record(SPRIG, digests) == {"image": SPRIG.image, "layout": "sprig", "digest": digests.digest,
                                            "binaries": {"buzz-acp": "a" * 64}}
    assert stack_record(FOLDER, None) == {"image": FOLDER.image, "layout": "folder", "digest": None, "binaries": None}
