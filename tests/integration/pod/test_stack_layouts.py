"""Stack layouts on the real kubelet (docs/stack.md): a trial pod whose stack is a sprig-layout
image gets /opt/buzz/bin/sprig with buzz-acp, buzz-agent, … linked to it, the image's CA bundle
and the digests manifest, and each name runs as sprig dispatching on argv[0]; a folder image that
`make stack-image` built from a folder of binaries installs the same way; a sprig image without
the binary at binaryPath fails the pod's stack install naming spec.stack.binaryPath. Each
layout is installed both ways (spec.stack.mount, docs/stack.md#mount): copied by the init
container, and mounted as an image volume with bin/ linked by what the launch exec runs.

The sprig here is a shell script that prints the name it was called by — the install copies and
links whatever file is at binaryPath, and a script shows argv[0] dispatch as well as a binary.
Test images are built on the project's base image with hack/images.sh (buildah, no daemon) and
imported into the cluster's containerd.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import subprocess
from pathlib import Path

import pytest
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.condition import ExperimentManifest
from buzz_operator.kube import exec as kexec
from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import create_pod
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod import launch_script, shell
from buzz_operator.pod.stack_install import (
    IMAGE_ROOT,
    READ_MANIFEST,
    SPRIG_LINKS,
    parse_manifest,
    read_manifest_command,
)
from buzz_operator.pod.trial_pod import build_trial_pod
from buzz_operator.scoring.failures import StepFailure

ROOT = Path(__file__).resolve().parents[3]
# prints the name it was run as: what a multicall binary dispatches on
SPRIG = b'#!/bin/sh\necho "sprig as $(basename "$0") $*"\n'
SPRIG_IMAGE = "docker.io/buzz-test/sprig-like:" + hashlib.sha256(SPRIG).hexdigest()[:12]
DOCKERFILE = """ARG BASE_IMAGE
FROM ${BASE_IMAGE}
COPY sprig /usr/local/bin/sprig
RUN chmod 0755 /usr/local/bin/sprig
"""


def _images(*args: str) -> str:
    done = subprocess.run(["bash", str(ROOT / "hack" / "images.sh"), *args], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def sprig_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A sprig-layout image: the base image with the multicall `sprig` at /usr/local/bin/sprig."""
    context = tmp_path_factory.mktemp("sprig-context")
    (context / "sprig").write_bytes(SPRIG)
    (context / "Dockerfile").write_text(DOCKERFILE)
    _images("context", SPRIG_IMAGE, str(context))
    return SPRIG_IMAGE


@pytest.fixture(scope="module")
def folder_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`make stack-image BUZZ_BIN_DIR=<a folder holding sprig>`: its last stdout line is the image."""
    bins = tmp_path_factory.mktemp("bins")
    (bins / "sprig").write_bytes(SPRIG)
    (bins / "sprig").chmod(0o755)
    return _images("stack-image", str(bins)).strip().splitlines()[-1]


async def _trial_pod(kube: Kube, namespace: str, name: str, stack: StackSource, make_trial_spec) -> dict:  # type: ignore[no-untyped-def]
    manifest = ExperimentManifest.load(ROOT / "manifests" / "standin-oracle.yaml")
    spec = make_trial_spec("hello-file", manifest).model_copy(update={"stack": stack, "stack_image": None})
    created = await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzTrial", "metadata": {"name": name}, "spec": spec.to_api()})
    # the forwarder only dials its target when an agent connects: nothing here does
    pod = build_trial_pod(trial_name=name, trial_uid=created["metadata"]["uid"], namespace=namespace, retry=0,
                          spec=spec, trial_labels={}, relay_listen="127.0.0.1:3600", relay_target="127.0.0.1:9")
    await create_pod(kube, namespace, pod)
    return pod


async def _sh(kube: Kube, namespace: str, pod: str, script: str) -> str:
    result = await kexec.run(kube, namespace, pod, "task", script, timeout_s=30)
    assert result.ok, (script, result.exit_code, result.stderr)
    return result.text()


async def _assert_sprig_installed(kube: Kube, namespace: str, pod: str, stack: StackSource) -> None:
    state = await wait_running(kube, namespace, pod, timeout_s=120)
    assert state.ready, state
    # what the launch exec reads the digests with: with mount image it installs first
    first = parse_manifest(await _sh(kube, namespace, pod, read_manifest_command(stack)))
    assert first == parse_manifest(await _sh(kube, namespace, pod, read_manifest_command(stack)))  # once
    if stack.mount is StackMount.IMAGE:
        target = (await _sh(kube, namespace, pod, "readlink -f /opt/buzz/bin/buzz-acp")).strip()
        assert target.startswith(f"{IMAGE_ROOT}/"), target
    for name in SPRIG_LINKS:
        assert (await _sh(kube, namespace, pod, f"readlink /opt/buzz/bin/{name}")).strip() == "sprig", name
        said = await _sh(kube, namespace, pod, f"/opt/buzz/bin/{name} --version")
        assert said.strip() == f"sprig as {name} --version", said
    digests = parse_manifest(await _sh(kube, namespace, pod, READ_MANIFEST))
    sprig = hashlib.sha256(SPRIG).hexdigest()
    assert digests.binaries == dict.fromkeys(("sprig", *SPRIG_LINKS), sprig)  # links resolved to sprig
    in_pod = await _sh(kube, namespace, pod, "sha256sum /opt/buzz/stack-digests.txt")
    assert in_pod.split()[0] == digests.digest
    bundle = await _sh(kube, namespace, pod, "head -c 27 /opt/buzz/ca-certificates.crt; "
                                             "[ -w /opt/buzz/logs ] && [ -w /opt/buzz/prompts ] && echo writable")
    assert bundle.startswith("-----BEGIN CERTIFICATE-----") and bundle.rstrip().endswith("writable"), bundle


MOUNTS = pytest.mark.parametrize("mount", [StackMount.COPY, StackMount.IMAGE])


def _mountable(mount: StackMount, request: pytest.FixtureRequest) -> None:
    if mount is StackMount.IMAGE:
        request.getfixturevalue("image_volumes")  # skips, saying so, on a runtime without them


@MOUNTS
async def test_a_sprig_image_is_installed_as_sprig_with_every_name_linked(  # type: ignore[no-untyped-def]
        kube: Kube, namespace, crds, make_trial_spec, sprig_image, mount: StackMount, request) -> None:
    _mountable(mount, request)
    name = f"sprig-{secrets.token_hex(3)}"
    stack = StackSource(image=sprig_image, layout=StackLayout.SPRIG, mount=mount)
    await _trial_pod(kube, namespace, name, stack, make_trial_spec)
    await _assert_sprig_installed(kube, namespace, name, stack)


@MOUNTS
async def test_a_folder_image_of_user_binaries_installs_the_same_stack(  # type: ignore[no-untyped-def]
        kube: Kube, namespace, crds, make_trial_spec, folder_image, mount: StackMount, request) -> None:
    _mountable(mount, request)
    name = f"folder-{secrets.token_hex(3)}"
    stack = StackSource(image=folder_image, layout=StackLayout.FOLDER, mount=mount)
    await _trial_pod(kube, namespace, name, stack, make_trial_spec)
    await _assert_sprig_installed(kube, namespace, name, stack)


async def test_mount_image_refuses_a_folder_layout_on_a_sprig_image_in_the_launchs_words(  # type: ignore[no-untyped-def]
        kube: Kube, namespace, crds, make_trial_spec, sprig_image, image_volumes) -> None:
    name = f"mountfolder-{secrets.token_hex(3)}"
    stack = StackSource(image=sprig_image, layout=StackLayout.FOLDER, mount=StackMount.IMAGE)
    await _trial_pod(kube, namespace, name, stack, make_trial_spec)
    state = await wait_running(kube, namespace, name, timeout_s=120)
    assert state.ready, state  # nothing is installed before the launch
    result = await kexec.run(kube, namespace, name, "task", shell.prepare_pod(read_manifest_command(stack)),
                             timeout_s=30)
    with pytest.raises(StepFailure) as caught:
        launch_script.parse(result.text(), result.exit_code, ["solo-1"], relay_ca=False)
    assert caught.value.reason == "StackInstallFailed"
    assert caught.value.message == f"stack: no /stack/bin in image {sprig_image} (layout folder)"


async def test_a_sprig_image_without_its_binary_fails_naming_binary_path(  # type: ignore[no-untyped-def]
        kube: Kube, namespace, crds, make_trial_spec, sprig_image) -> None:
    name = f"nosprig-{secrets.token_hex(3)}"
    stack = StackSource(image=sprig_image, layout=StackLayout.SPRIG, binary_path="/usr/bin/no-such-sprig")
    await _trial_pod(kube, namespace, name, stack, make_trial_spec)
    state = await wait_running(kube, namespace, name, timeout_s=120)
    assert not state.ready and state.reason == "StackInstallFailed", state
    assert "no /usr/bin/no-such-sprig in image" in state.message and "spec.stack.binaryPath" in state.message, state


async def test_a_folder_layout_on_a_sprig_image_fails_naming_the_layout(  # type: ignore[no-untyped-def]
        kube: Kube, namespace, crds, make_trial_spec, sprig_image) -> None:
    name = f"wrongfolder-{secrets.token_hex(3)}"
    await _trial_pod(kube, namespace, name, StackSource(image=sprig_image, layout=StackLayout.FOLDER), make_trial_spec)
    state = await asyncio.wait_for(wait_running(kube, namespace, name, timeout_s=120), 130)
    assert state.reason == "StackInstallFailed" and "no /stack/bin in image" in state.message, state
