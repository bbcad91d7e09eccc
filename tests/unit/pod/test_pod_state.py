"""pod_state over pods shaped as a current apiserver reports them, native sidecar included."""

from __future__ import annotations

from typing import Any

from buzz_operator.pod.state import pod_state


def _pod(forwarder: dict[str, Any], task: dict[str, Any], phase: str = "Running") -> dict[str, Any]:
    return {
        "metadata": {"name": "t-0"},
        "spec": {
            "initContainers": [{"name": "stack"}, {"name": "forwarder", "restartPolicy": "Always"}],
            "containers": [{"name": "task"}],
        },
        "status": {
            "phase": phase,
            "initContainerStatuses": [
                {"name": "stack", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                {"name": "forwarder", "state": forwarder},
            ],
            "containerStatuses": [{"name": "task", "state": task}],
        },
    }


RUNNING = {"running": {"startedAt": "2026-12-01T00:00:00Z"}}


def test_ready_when_the_task_and_the_sidecar_run() -> None:
    assert pod_state(_pod(RUNNING, RUNNING)).ready


def test_not_ready_while_the_sidecar_restarts() -> None:
    state = pod_state(_pod({"waiting": {"reason": "PodInitializing"}}, RUNNING))
    assert not state.ready and state.reason is None


def test_a_crash_looping_sidecar_is_hopeless() -> None:
    state = pod_state(_pod({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}, RUNNING))
    assert state.reason == "ContainerCrashed" and "forwarder" in state.message


def test_a_pod_without_sidecars_is_ready_on_its_main_containers() -> None:
    pod = _pod(RUNNING, RUNNING)
    pod["spec"]["initContainers"] = [{"name": "stack"}]
    pod["status"]["initContainerStatuses"] = pod["status"]["initContainerStatuses"][:1]
    assert pod_state(pod).ready


def test_a_container_killed_at_its_memory_limit_is_oom_killed_not_a_crash() -> None:
    # as the kubelet reports a container the kernel killed for memory (exit 137, reason OOMKilled)
    killed = {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-12-01T00:00:00Z",
                             "finishedAt": "2026-12-01T00:01:00Z"}}
    state = pod_state(_pod(RUNNING, killed, phase="Failed"))
    assert (state.ready, state.reason) == (False, "OOMKilled")
    assert state.message == "task was OOM-killed at its memory limit (exit 137)"
    crashed = {"terminated": {"exitCode": 137, "reason": "Error"}}
    assert pod_state(_pod(RUNNING, crashed, phase="Failed")).reason == "ContainerCrashed"


def test_a_sandbox_killed_for_memory_is_oom_killed_though_its_sidecar_crash_loops() -> None:
    # under gVisor, as the kubelet reported it on the local cluster (2026-12-05): the sandbox died
    # for memory, the task container OOMKilled (exit 128), the forwarder restarting after it
    killed = {"terminated": {"exitCode": 128, "reason": "OOMKilled"}}
    looping = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container"}}
    state = pod_state(_pod(looping, killed, phase="Running"))
    assert (state.reason, state.message) == ("OOMKilled", "task was OOM-killed at its memory limit (exit 128)")
    # a container killed for memory in its last run, restarting now, is the same cause
    pod = _pod(looping, RUNNING)
    pod["status"]["initContainerStatuses"][1]["lastState"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}
    assert pod_state(pod).reason == "OOMKilled"
    # a crash loop with no OOM kill behind it stays a crash
    assert pod_state(_pod(looping, RUNNING)).reason == "ContainerCrashed"


def test_a_compose_service_that_keeps_failing_is_the_environments_failure() -> None:
    # a service whose startup probe (its compose healthcheck) never passes is killed and started
    # again until the kubelet backs off: ServiceFailed, naming the service (docs/task-toml.md#compose)
    pod = _pod(RUNNING, {"waiting": {"reason": "PodInitializing"}})
    pod["spec"]["initContainers"].append({"name": "db", "restartPolicy": "Always"})
    pod["status"]["initContainerStatuses"].append(
        {"name": "db", "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s"}}})
    state = pod_state(pod)
    assert (state.reason, state.message) == ("ServiceFailed", "compose service db: CrashLoopBackOff: back-off 20s")
    pod["status"]["initContainerStatuses"][-1]["state"] = {"terminated": {"exitCode": 1, "reason": "Error"}}
    assert pod_state(pod).reason == "ServiceFailed"
