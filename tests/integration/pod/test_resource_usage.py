"""The box, measured on a real kubelet and real cgroups (docs/resources.md): the task container's
own cgroup read from inside it by the operator's script, a process OOM-killed inside a container
that lives on, CPU throttling under a tight limit and none under a loose one, and a container
the kernel killed for memory named OOMKilled from the kubelet's own status."""

from __future__ import annotations

import asyncio

from buzz_operator.kube import exec as kexec
from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import create_pod, read_pod
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod import cgroup
from buzz_operator.pod.state import pod_state

IMAGE = "docker.io/buzz/debian-py:bookworm"
SLEEPER = 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done'
# a process that wants 256 MiB, far past the 64 MiB limit of the tight pod
HOG = "python3 -c 'b = bytearray(256 * 2**20); b[::4096] = b\"x\" * len(b[::4096])'"
BUSY = "timeout 3 sh -c 'while :; do :; done'"


def _pod(name: str, *, cpu: str, memory: str, command: str = SLEEPER, cpu_request: str | None = None
         ) -> dict[str, object]:
    limits = {"cpu": cpu, "memory": memory}
    requests = {**limits, "cpu": cpu_request or cpu}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0,
                     "restartPolicy": "Never", "containers": [{
                         "name": "task", "image": IMAGE, "imagePullPolicy": "Never", "command": ["sh", "-c", command],
                         "resources": {"requests": requests, "limits": limits}}]}}


async def _running(kube: Kube, namespace: str, body: dict[str, object]) -> str:
    await create_pod(kube, namespace, body)
    name = str(body["metadata"]["name"])  # type: ignore[index]
    state = await wait_running(kube, namespace, name, timeout_s=120)
    assert state.ready, state
    return name


async def _usage(kube: Kube, namespace: str, pod: str, before: cgroup.Reading | None = None
                 ) -> tuple[cgroup.Reading, object]:
    ran = await kexec.run(kube, namespace, pod, "task", cgroup.read("now"), timeout_s=30)
    assert ran.ok, ran.stderr
    reading = cgroup.parse(ran.stderr.decode(), "now")
    assert reading is not None, ran.stderr
    return reading, cgroup.usage(reading, before)


async def test_a_process_killed_for_memory_inside_a_living_container_is_counted(kube: Kube, namespace: str) -> None:
    pod = await _running(kube, namespace, _pod("tight-memory", cpu="500m", memory="64Mi"))
    before, _ = await _usage(kube, namespace, pod)
    hog = await kexec.run(kube, namespace, pod, "task", HOG, timeout_s=60)
    found = await read_pod(kube, namespace, pod)
    if before.version == 2 and not pod_state(found).ready:
        # cgroup v2: the kubelet groups a container's OOM kills, the container went with its hog
        assert pod_state(found).reason == "OOMKilled", found
        return
    assert hog.exit_code == 137, hog  # SIGKILL: the kernel's OOM killer, not the program
    _, used = await _usage(kube, namespace, pod, before)
    print(f"\n[resources] hog in a 64 MiB container: {used}")
    assert used.oom_kills is not None and used.oom_kills >= 1, used  # type: ignore[attr-defined]
    assert used.memory_limit_mb == 64.0 and used.peak_memory_mb > 48, used  # type: ignore[attr-defined]
    assert pod_state(found).ready  # the container lived on: ResourcePressure's case, not OOMKilled


async def test_a_tight_cpu_limit_throttles_and_a_loose_one_does_not(kube: Kube, namespace: str) -> None:
    tight, loose = await asyncio.gather(
        _running(kube, namespace, _pod("tight-cpu", cpu="100m", memory="128Mi")),
        # a 2-CPU limit a single busy thread cannot reach; a small request, so it fits beside the rest
        _running(kube, namespace, _pod("loose-cpu", cpu="2", cpu_request="100m", memory="128Mi")),
    )
    figures = {}
    for pod in (tight, loose):
        before, _ = await _usage(kube, namespace, pod)
        await kexec.run(kube, namespace, pod, "task", BUSY, timeout_s=30)
        _, figures[pod] = await _usage(kube, namespace, pod, before)
    print(f"\n[resources] 3 s busy loop: 100m {figures[tight]}; 2 CPUs {figures[loose]}")
    tight_used, loose_used = figures[tight], figures[loose]
    # the kernel's own counters say which box held the loop back; CPU time is printed, not judged
    assert tight_used.throttled_periods and tight_used.throttled_periods > 10, tight_used  # type: ignore[attr-defined]
    assert tight_used.cpu_seconds is not None and loose_used.periods, (tight_used, loose_used)  # type: ignore[attr-defined]
    assert loose_used.throttled_periods == 0, loose_used  # type: ignore[attr-defined]


async def test_a_container_the_kernel_kills_for_memory_is_oom_killed(kube: Kube, namespace: str) -> None:
    # the container's own process is the hog, so the kernel kills the container on v1 and v2 alike
    await create_pod(kube, namespace, _pod("oom-main", cpu="500m", memory="64Mi", command=HOG))
    for _ in range(120):
        state = pod_state(await read_pod(kube, namespace, "oom-main"))
        if state.reason is not None:
            break
        await asyncio.sleep(1)
    assert (state.reason, state.message) == ("OOMKilled", "task was OOM-killed at its memory limit (exit 137)"), state

