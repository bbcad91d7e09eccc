"""Task images built by `make images` run on the local stack: hello-file's own test runs inside
its image as a pod, the way the operator grades a plain container task (tests copied in after
the agent, reward read from /logs/verifier/reward.txt)."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from buzz_operator.dataset import builtin_dataset_path, load_task

from tests.support.cluster import create_namespace

TASK_REGISTRY = "docker.io/buzz-tasks"


def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, check=check)


@pytest.fixture
def namespace(kubeconfig: str) -> Iterator[str]:
    ns = f"tasks-{uuid.uuid4().hex[:8]}"
    create_namespace(ns)
    yield ns
    kubectl("delete", "namespace", ns, "--wait=false", check=False)


def start_task_pod(namespace: str, image: str) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "task"},
           "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                    "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "task", "image": image, "imagePullPolicy": "Never",
                                    "command": ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]}]}}
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps(pod))
    kubectl("-n", namespace, "wait", "--for=condition=Ready", "pod/task", "--timeout=90s")
    return "task"


def exec_in(namespace: str, *cmd: str) -> subprocess.CompletedProcess[str]:
    return kubectl("-n", namespace, "exec", "task", "--", *cmd, check=False)


def copy_in(namespace: str, local: Path, remote: str) -> None:
    # tar over exec, as the operator uploads: no kubectl-cp quirks with symlinks or permissions
    tar = subprocess.run(["tar", "-C", str(local), "-cf", "-", "."], capture_output=True, check=True).stdout
    exec_in(namespace, "mkdir", "-p", remote)
    subprocess.run(["kubectl", "-n", namespace, "exec", "-i", "task", "--", "tar", "-C", remote, "-xf", "-"],
                   input=tar, check=True, capture_output=True)


@pytest.mark.parametrize("solved, reward", [(True, "1"), (False, "0")])
def test_hello_file_test_runs_in_its_image(namespace: str, solved: bool, reward: str) -> None:
    task = load_task(builtin_dataset_path() / "hello-file")
    start_task_pod(namespace, task.image_ref(TASK_REGISTRY, "builtin"))
    if solved:
        assert task.solution_dir is not None
        copy_in(namespace, task.solution_dir, "/solution")
        done = exec_in(namespace, "bash", "/solution/solve.sh")
        assert done.returncode == 0, done.stderr
    copy_in(namespace, task.tests_dir, "/tests")
    graded = exec_in(namespace, "bash", "/tests/test.sh")
    assert graded.returncode == 0, graded.stderr
    assert exec_in(namespace, "cat", "/logs/verifier/reward.txt").stdout.strip() == reward
