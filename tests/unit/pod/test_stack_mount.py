"""spec.stack.mount image (docs/stack.md#mount): the install the launch exec runs in the task
container, against a stack image "mounted" as a scratch directory, with this machine's sh and
coreutils; the pod shape it needs; and the launch's reading of its refusals.

On a real kubelet with image volumes (containerd >= 2.1) the whole corridor runs it in
tests/integration/pod/test_stack_mount.py.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.pod import launch_script, shell
from buzz_operator.pod.stack_install import (
    IMAGE_ROOT,
    IMAGE_TOOLS,
    READ_MANIFEST,
    SPRIG_LINKS,
    mount_install_command,
    parse_manifest,
    read_manifest_command,
    write_manifest,
)
from buzz_operator.pod.trial_pod import STACK_IMAGE_VOLUME, stack_init, stack_mounts, stack_volumes
from buzz_operator.scoring.failures import StepFailure

SPRIG = StackSource(image="ghcr.io/block/sprig:1", layout=StackLayout.SPRIG, mount=StackMount.IMAGE)
FOLDER = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER, mount=StackMount.IMAGE)
MULTICALL = b"#!/bin/sh\necho multicall\n"


def _install(source: StackSource, image: Path, root: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"PATH": path} if path is not None else {})}
    return subprocess.run(["/bin/sh", "-c", mount_install_command(source, root=str(root), image_root=str(image))],
                          capture_output=True, text=True, env=env)


def _folder_image(tmp_path: Path) -> Path:
    image = tmp_path / "image"
    (image / "stack" / "bin").mkdir(parents=True)
    (image / "stack" / "bin" / "sprig").write_bytes(MULTICALL)
    (image / "stack" / "bin" / "sprig").chmod(0o755)
    (image / "stack" / "bin" / "buzz-acp").symlink_to("sprig")
    (image / "stack" / "bin" / "tools").mkdir()
    (image / "stack" / "bin" / "tools" / "rg").write_bytes(b"rg")
    (image / "stack" / "ca-certificates.crt").write_text("stack CA\n")
    (image / "stack" / "lib").mkdir()
    (image / "stack" / "lib" / "libx.so").write_bytes(b"lib")
    return image


def _sprig_image(tmp_path: Path) -> Path:
    image = tmp_path / "image"
    (image / "usr" / "local" / "bin").mkdir(parents=True)
    (image / "usr" / "local" / "bin" / "sprig").write_bytes(MULTICALL)
    (image / "usr" / "local" / "bin" / "sprig").chmod(0o755)
    certs = image / "etc" / "ssl" / "certs"
    certs.mkdir(parents=True)
    (certs / "bundle.pem").write_text("image's system CA\n")
    # absolute, as images often link their trust store: it names the image's file, not the container's
    (certs / "ca-certificates.crt").symlink_to("/etc/ssl/certs/bundle.pem")
    return image


def _copy_install(tmp_path: Path, image: Path) -> str:
    """The digests the init container's copy leaves for the same folder image."""
    copied = tmp_path / "copied"
    shutil.copytree(image / "stack", copied, symlinks=True)
    subprocess.run(["/bin/sh", "-c", write_manifest(str(copied))], check=True)
    return (copied / "stack-digests.txt").read_text()


def test_a_folder_image_is_linked_not_copied_and_its_digests_are_the_copys(tmp_path: Path) -> None:
    image, root = _folder_image(tmp_path), tmp_path / "buzz"
    root.mkdir()
    assert _install(FOLDER, image, root).returncode == 0
    assert os.readlink(root / "bin" / "sprig") == f"{image}/stack/bin/sprig"
    assert os.readlink(root / "bin" / "buzz-acp") == "sprig"  # a link stays the same link
    assert os.readlink(root / "bin" / "tools" / "rg") == f"{image}/stack/bin/tools/rg"
    # the rest is copied: the CA file is appended to at launch (spec.relay.caBundle)
    ca = root / "ca-certificates.crt"
    assert not ca.is_symlink() and ca.read_text() == "stack CA\n"
    assert (root / "lib" / "libx.so").read_bytes() == b"lib"
    assert oct((root / "logs").stat().st_mode & 0o777) == oct(0o777)
    manifest = (root / "stack-digests.txt").read_text()
    assert manifest == _copy_install(tmp_path, image)
    sprig = hashlib.sha256(MULTICALL).hexdigest()
    assert parse_manifest(manifest).binaries == {"buzz-acp": sprig, "sprig": sprig,
                                                 "tools/rg": hashlib.sha256(b"rg").hexdigest()}


def test_a_sprig_image_gets_every_name_and_the_ca_its_absolute_link_names_in_the_image(tmp_path: Path) -> None:
    image, root = _sprig_image(tmp_path), tmp_path / "buzz"
    root.mkdir()
    result = _install(SPRIG, image, root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.readlink(root / "bin" / "sprig") == f"{image}/usr/local/bin/sprig"
    assert {name: os.readlink(root / "bin" / name) for name in SPRIG_LINKS} == dict.fromkeys(SPRIG_LINKS, "sprig")
    assert (root / "ca-certificates.crt").read_text() == "image's system CA\n"
    binaries = parse_manifest((root / "stack-digests.txt").read_text()).binaries
    assert set(binaries) == {*SPRIG_LINKS, "sprig"}
    assert set(binaries.values()) == {hashlib.sha256(MULTICALL).hexdigest()}


@pytest.mark.parametrize(("source", "build", "said"), [
    (FOLDER, None, "stack: no /stack/bin in image docker.io/buzz/stack:dev (layout folder)"),
    (SPRIG, None, "stack: no /usr/local/bin/sprig in image ghcr.io/block/sprig:1 (spec.stack.binaryPath)"),
    (SPRIG.model_copy(update={"binary_path": "/opt/sprig"}), _sprig_image,
     "stack: no /opt/sprig in image ghcr.io/block/sprig:1 (spec.stack.binaryPath)"),
], ids=["folder-without-stack", "sprig-without-binary", "sprig-binary-path-elsewhere"])
def test_an_image_without_what_its_layout_needs_is_refused_in_one_stdout_line(
    tmp_path: Path, source: StackSource, build: object, said: str,
) -> None:
    image = build(tmp_path) if callable(build) else tmp_path / "image"
    image.mkdir(exist_ok=True)
    root = tmp_path / "buzz"
    root.mkdir()
    result = _install(source, image, root)
    assert result.returncode == 1 and result.stdout.strip().splitlines()[-1] == said
    assert not (root / "stack-digests.txt").exists()


def test_a_folder_without_buzz_acp_is_refused(tmp_path: Path) -> None:
    image, root = _folder_image(tmp_path), tmp_path / "buzz"
    (image / "stack" / "bin" / "buzz-acp").unlink()
    root.mkdir()
    result = _install(FOLDER, image, root)
    assert result.returncode == 1
    assert result.stdout.strip() == ("stack: image docker.io/buzz/stack:dev (layout folder) installs no "
                                     "executable bin/buzz-acp")


def test_a_task_image_without_a_tool_the_install_runs_is_refused_naming_it(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in IMAGE_TOOLS:
        if tool != "sha256sum":
            found = shutil.which(tool)
            assert found is not None
            (tools / tool).symlink_to(found)
    image, root = _folder_image(tmp_path), tmp_path / "buzz"
    root.mkdir()
    result = _install(FOLDER, image, root, path=str(tools))
    assert result.returncode == 1
    assert result.stdout.strip() == ("stack: the task image has no sha256sum, which spec.stack.mount image "
                                     "runs there (mount copy needs none)")


def test_the_launch_installs_once_then_reads_what_it_wrote() -> None:
    read = read_manifest_command(FOLDER)
    assert read.startswith("{ [ -s /opt/buzz/stack-digests.txt ] || (") and read.endswith(READ_MANIFEST)
    assert IMAGE_ROOT in read
    assert read_manifest_command(FOLDER.model_copy(update={"mount": StackMount.COPY})) == READ_MANIFEST


def test_the_launch_names_the_refusal_as_stack_install_failed() -> None:
    line = f"{shell.MANIFEST_FAILED}1 stack: no /stack/bin in image x:1 (layout folder)"
    with pytest.raises(StepFailure) as caught:
        launch_script.parse(line + "\n", 0, ["orchestrator"], relay_ca=False)
    assert (caught.value.reason, caught.value.message) == ("StackInstallFailed",
                                                           "stack: no /stack/bin in image x:1 (layout folder)")
    with pytest.raises(StepFailure, match=r"reading the stack's digests: exit 1$"):
        launch_script.parse(f"{shell.MANIFEST_FAILED}1 \n", 0, ["orchestrator"], relay_ca=False)


def test_the_prepare_step_prints_the_refusal_after_the_exit_code(tmp_path: Path) -> None:
    refusing = "echo 'stack: no /stack/bin in image x:1'; exit 1"
    result = subprocess.run(["/bin/sh", "-c", shell.prepare_pod(f"( {refusing} )")],
                            capture_output=True, text=True)
    assert result.stdout == f"{shell.MANIFEST_FAILED}1 stack: no /stack/bin in image x:1\n"


def test_mount_image_pods_have_no_init_copy_and_the_image_read_only_beside_opt_buzz() -> None:
    assert stack_init(SPRIG, "IfNotPresent") == []
    assert stack_volumes(SPRIG, "Never") == [
        {"name": "buzz-stack", "emptyDir": {}},
        {"name": STACK_IMAGE_VOLUME, "image": {"reference": SPRIG.image, "pullPolicy": "Never"}},
    ]
    assert stack_mounts(SPRIG) == [{"name": "buzz-stack", "mountPath": "/opt/buzz"},
                                   {"name": STACK_IMAGE_VOLUME, "mountPath": IMAGE_ROOT, "readOnly": True}]
    copy = SPRIG.model_copy(update={"mount": StackMount.COPY})
    assert [c["name"] for c in stack_init(copy, "IfNotPresent")] == ["stack"]
    assert stack_volumes(copy, "Never") == [{"name": "buzz-stack", "emptyDir": {}}]
    assert stack_mounts(copy) == [{"name": "buzz-stack", "mountPath": "/opt/buzz"}]
