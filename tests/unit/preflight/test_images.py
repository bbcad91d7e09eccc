"""The images check says what to fix: a missing or wrong pull Secret by its spec entry, a task
image that does not start by the tasks that run it and by what provides it."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.dataset import load_task
from buzz_operator.preflight import checks
from buzz_operator.preflight.drive.runner import failed_image_detail, image_origins

from tests.support.corpus import load_corpus
from tests.unit.dataset.task_factory import make_task

ROOT = Path(__file__).resolve().parents[3]


def test_pull_secrets_named_by_their_entry() -> None:
    assert checks.pull_secret_problem([]) is None
    assert checks.pull_secret_problem([("regcred", "kubernetes.io/dockerconfigjson"),
                                       ("old", "kubernetes.io/dockercfg")]) is None
    assert checks.pull_secret_problem([("regcred", "kubernetes.io/dockerconfigjson"), ("gone", None)]) == (
        "spec.imagePullSecrets[1].name: Secret gone not found in the sweep's namespace")
    assert checks.pull_secret_problem([("keys", "Opaque")]) == (
        "spec.imagePullSecrets[0].name: Secret keys is of type Opaque, not kubernetes.io/dockerconfigjson")


# the kubelet's words for each failed pull, as the local cluster said them (kubelet 1.37,
# containerd 2.2.9, the distribution registry v3.1.2 of hack/registry.sh; 2026-12-05)
DENIED = ('failed to pull and unpack image "192.0.2.2:5443/buzz/stack:dev": failed to resolve image: unexpected '
          'status from HEAD request to https://192.0.2.2:5443/v2/buzz/stack/manifests/dev: 401 Unauthorized')
ANONYMOUS = ('failed to pull and unpack image "192.0.2.2:5443/buzz/stack:dev": failed to resolve image: pull access '
             'denied, repository does not exist or may require authorization: authorization failed: no basic auth '
             'credentials')
NOT_FOUND = ('rpc error: code = NotFound desc = failed to pull and unpack image "192.0.2.2:5443/buzz/stack:nope": '
             'failed to resolve image: 192.0.2.2:5443/buzz/stack:nope: not found')
UNREACHABLE = ('failed to pull and unpack image "192.0.2.2:26731/buzz/stack:dev": failed to resolve image: failed to do '
               'request: Head "https://192.0.2.2:26731/v2/buzz/stack/manifests/dev": dial tcp 192.0.2.2:26731: '
               'connect: connection refused')
UNTRUSTED = ('failed to pull and unpack image "192.0.2.2:5443/buzz/stack:dev": failed to resolve image: failed to do '
             'request: Head "https://192.0.2.2:5443/v2/buzz/stack/manifests/dev": tls: failed to verify certificate: '
             'x509: certificate signed by unknown authority')


@pytest.mark.parametrize(("message", "cause"), [
    (DENIED, checks.PULL_DENIED), (ANONYMOUS, checks.PULL_DENIED), (NOT_FOUND, checks.PULL_NOT_FOUND),
    (UNREACHABLE, checks.PULL_UNREACHABLE), (UNTRUSTED, checks.PULL_UNTRUSTED),
    ('Container image "x:1" is not present with pull policy of Never', None),
    ("stack: ErrImageNeverPull: x", checks.PULL_NEVER), ("exited 1", None),
])
def test_a_failed_pull_is_named_by_its_cause(message: str, cause: str | None) -> None:
    assert checks.pull_cause(message) == cause


@pytest.fixture
def spec() -> BuzzSweepSpec:
    return BuzzSweepSpec.model_validate(load_corpus().good_body(ROOT, store_url="file:///tmp/store")["spec"])


def test_task_image_failures_name_tasks_and_provider(spec: BuzzSweepSpec, tmp_path: Path) -> None:
    private = '[environment]\ndocker_image = "ghcr.io/org/private:1"\n'
    tasks = [load_task(make_task(tmp_path, "alpha")),
             *(load_task(make_task(tmp_path, name, dockerfile=None, toml=private)) for name in ("beta", "gamma"))]
    origins = image_origins(tasks, "registry.example/tasks", "tb")
    images = [t.image_ref("registry.example/tasks", "tb") for t in tasks]
    # beta and gamma pin one image: the canary starts it once and a failure names both
    assert images[1] == images[2] == "ghcr.io/org/private:1" and origins[images[1]].tasks == ("beta", "gamma")
    first = failed_image_detail("task: ErrImagePull: not found", "ImagePullFailed", spec, images, origins)
    assert first == (f"spec.taskImageRegistry: task alpha: {images[0]} is built from its environment/Dockerfile, "
                     "which the operator does not build: build and push it (`buzzctl dataset images` lists each): "
                     f"{checks.PULL_NOT_FOUND}: ImagePullFailed: task: ErrImagePull: not found")[:checks.DETAIL_MAX]
    second = failed_image_detail("image-1: ImagePullBackOff: Back-off pulling image", "ImagePullFailed", spec, images,
                                 origins)
    assert second == ("task beta, gamma: environment.docker_image ghcr.io/org/private:1 (a private registry needs "
                      "spec.imagePullSecrets): ImagePullFailed: image-1: ImagePullBackOff: Back-off pulling image")
    # a refused login is the pull Secrets' to fix, whichever image it was
    denied = failed_image_detail(f"image-1: ErrImagePull: {DENIED}", "ImagePullFailed", spec, images, origins)
    assert denied.startswith(f"spec.imagePullSecrets: {checks.PULL_DENIED} (pulling the image of "
                             "spec.taskImageRegistry): ImagePullFailed: image-1: ErrImagePull: "), denied
    # an unreachable registry: not the "build and push it" advice, the image exists
    down = failed_image_detail(f"task: ErrImagePull: {UNREACHABLE}", "ImagePullFailed", spec, images, origins)
    assert down.startswith(f"spec.taskImageRegistry: task alpha: {images[0]}: {checks.PULL_UNREACHABLE}: "), down
    assert "build and push" not in down
    # a long kubelet message is cut, never what to fix
    long = failed_image_detail("task: ErrImagePull: " + "x" * 400, "ImagePullFailed", spec, images, origins)
    assert len(long) == checks.DETAIL_MAX and "buzzctl dataset images" in long
    # not a task container: the field the image comes from, as before
    stack = failed_image_detail("stack: ErrImageNeverPull: x", "ImagePullFailed", spec, images, origins)
    assert stack.startswith(f"spec.stack: {checks.PULL_NEVER}: ImagePullFailed")
    # mount image: the stack is a volume of the task container, whose message quotes the stack
    # image (as the kubelet said it on the local cluster, containerd 2.2.9)
    mounted = StackSource(image="docker.io/buzz/no-such-stack:1", layout=StackLayout.FOLDER, mount=StackMount.IMAGE)
    said = 'task: ErrImageNeverPull: Container image "docker.io/buzz/no-such-stack:1" is not present with pull policy of Never'
    assert failed_image_detail(said, "ImagePullFailed", spec, images, origins, mounted) == (
        f"spec.stack: {checks.PULL_NEVER}: ImagePullFailed: {said}")
    # the task image's own failure is still the task's
    assert failed_image_detail("task: ErrImagePull: not found", "ImagePullFailed", spec, images, origins,
                               mounted) == first


def test_a_stack_that_refuses_its_layout_names_spec_stack(spec: BuzzSweepSpec) -> None:
    """A sprig-layout stack on a folder image: the canary's stack init container exits with the
    install's refusal (kube.pods' `stack exited 1: …` detail), which is the stack's, not a task's."""
    stack = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.SPRIG)
    spec = spec.model_copy(update={"stack": stack})
    message = ("stack exited 1: Error: stack: no /usr/local/bin/sprig in image docker.io/buzz/stack:dev "
               "(spec.stack.binaryPath)")
    detail = failed_image_detail(message, "StackInstallFailed", spec, ["docker.io/buzz/task:x"], {}, stack)
    assert detail == f"spec.stack: StackInstallFailed: {message}"[:200]
    assert failed_image_detail("task exited 2: Error", "ContainerCrashed", spec, ["t:1"], {}, stack).startswith(
        "spec.taskImageRegistry: ")


def test_a_missing_runtime_class_names_spec_runtime_class_name(spec: BuzzSweepSpec) -> None:
    from buzz_operator.preflight.drive.runner import refused_pod_detail

    gvisor = spec.model_copy(update={"runtime_class_name": "gvisor"})
    body = ('{"kind":"Status","status":"Failure","message":"pods \\"preflight-x\\" is forbidden: pod rejected: '
            'RuntimeClass \\"gvisor\\" not found","reason":"Forbidden","code":403}')
    assert refused_pod_detail(403, body, gvisor).startswith(
        "spec.runtimeClassName: the cluster has no usable RuntimeClass 'gvisor' (a sweep that names none gets "
        "the chart's trialRuntimeClassName; HTTP 403: ")
    # another refusal of the pod (Pod Security) is not blamed on a RuntimeClass the sweep did not name
    assert refused_pod_detail(403, 'violates PodSecurity "restricted:latest"', spec).startswith(
        "spec: the cluster refuses a pod with these images (HTTP 403: ")
