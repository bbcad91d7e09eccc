"""buzzctl trial logs while a trial runs: read live from its pod (a real pod on the local
kubelet, its seat logs written where the stack writes them), and from the bundle once the
trial's pod is gone or `--bundle` is asked for."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.condition.paths import REMOTE_LOGS
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import objects
from buzz_operator.kube.client import connect
from buzz_operator.kube.pods import wait_running

from tests.integration.cli.test_watch_tmux import MERGE, sweep_body, trial_body

BUZZCTL = Path(sys.executable).with_name("buzzctl")
IMAGE = "docker.io/buzz/debian-py:bookworm"  # the task base image: sh and tar, as every task image


def buzzctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BUZZCTL), *args], capture_output=True, text=True, timeout=120)


async def _running_trial(namespace: str, sweep: str, trial: str, pod: str) -> None:
    async with await connect() as kube:
        await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", sweep_body(sweep))
        await kube.custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "buzztrials", trial_body(sweep, trial, "hello-file", 1))
        await kube.custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, "buzztrials", trial, {"status": {"phase": "Running", "pod": pod}},
            _content_type=MERGE)
        await objects.create_pod(kube, namespace, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod},
            "spec": {"automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "task", "image": IMAGE, "imagePullPolicy": "Never",
                                     "command": ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"]}]},
        })  # fmt: skip
        await wait_running(kube, namespace, pod, timeout_s=120)
        script = (f"mkdir -p {REMOTE_LOGS} && printf 'subscribed to channel c1\\n' > {REMOTE_LOGS}/lead-1.stdout.log"
                  f" && printf 'worker says hi\\n' > {REMOTE_LOGS}/worker-1.stdout.log"
                  f" && : > {REMOTE_LOGS}/lead-1.stderr.log && printf 'x\\n' > {REMOTE_LOGS}/relay-forwarder.log")
        result = await kexec.run(kube, namespace, pod, "task", script, timeout_s=60)
        assert result.ok, result.stderr


async def _delete_pod(namespace: str, pod: str) -> None:
    async with await connect() as kube:
        await objects.delete_pod(kube, namespace, pod, grace_seconds=0)
        await objects.wait_pod_gone(kube, namespace, pod, timeout_s=60)


def test_logs_are_read_live_from_the_running_pod(namespace: str, kubeconfig: str, tmp_path: Path) -> None:
    sweep, trial, pod = "live", "live-trial", "live-trial-0"
    asyncio.run(_running_trial(namespace, sweep, trial, pod))

    shown = buzzctl("trial", "logs", trial, "-n", namespace)
    print(shown.stdout)
    assert shown.returncode == 0, shown.stderr
    assert f"==> lead-1.stdout.log (live from pod {pod}) <==" in shown.stdout
    assert "subscribed to channel c1" in shown.stdout and "worker says hi" in shown.stdout
    assert "relay-forwarder" not in shown.stdout  # seat logs only, as from a bundle

    one = buzzctl("trial", "logs", trial, "-n", namespace, "--seat", "worker-1")
    assert one.returncode == 0, one.stderr
    assert "worker says hi" in one.stdout and "lead-1" not in one.stdout

    # --bundle reads the store, where this trial has no bundle: a user error naming the trial
    store = f"file://{tmp_path}"
    forced = buzzctl("trial", "logs", trial, "-n", namespace, "--bundle", "--store", store)
    assert forced.returncode == 1 and trial in forced.stderr, (forced.returncode, forced.stderr)

    # the pod gone (the trial still says Running): the bundle is where the logs are now
    asyncio.run(_delete_pod(namespace, pod))
    bundle = tmp_path / sweep / trial / "agent" / "buzz"
    bundle.mkdir(parents=True)
    (bundle / "lead-1.stdout.log").write_text("from the bundle\n")
    after = buzzctl("trial", "logs", trial, "-n", namespace, "--store", store)
    assert after.returncode == 0, after.stderr
    assert "==> lead-1.stdout.log <==" in after.stdout and "from the bundle" in after.stdout
