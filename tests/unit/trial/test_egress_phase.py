"""trial/egress_phase.enter_grading: the agents are stopped (and that checked) and their logs
read before the pod is relabelled for grading, with the task's network; what goes wrong is a step failure of its own
class. The exec and the API are stand-ins here (tests/integration/chart/test_network_policy_phases.py
and test_chart_install.py relabel real pods)."""

from __future__ import annotations

import tomllib
from types import SimpleNamespace
from typing import Any

import pytest
from buzz_operator.api import labels as L
from buzz_operator.dataset.config import TaskConfig
from buzz_operator.kube import tar
from buzz_operator.kube.exec import ExecResult
from buzz_operator.pod.shell import STOP_FAILED_EXIT, STOP_THEN_TAR_LOGS
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive import egress_phase
from kubernetes_asyncio.client.exceptions import ApiException


def context(toml: str = "") -> Any:
    task = SimpleNamespace(config=TaskConfig.model_validate(tomllib.loads(toml)))
    return SimpleNamespace(kube=object(), namespace="ns", task=task)


class Calls:
    """What enter_grading did, in order; `left` is the stop script's last line."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []
        self.left = "left 0"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    done = Calls()

    async def sh(ctx: Any, pod: str, script: str, **kwargs: Any) -> ExecResult:
        # as the script answers: `left <n>` on stderr, then the logs' tar or the survivors' exit
        done.seen.append(("sh", script))
        if done.left != "left 0":
            return ExecResult(STOP_FAILED_EXIT, b"", f"{done.left}\n".encode())
        return ExecResult(0, tar.pack({"lead-1.stdout.log": b"usage"}), f"{done.left}\n".encode())

    async def relabel(kube: Any, namespace: str, pod: str, wanted: dict[str, str]) -> dict[str, str]:
        done.seen.append(("relabel", dict(wanted)))
        return dict(wanted)

    monkeypatch.setattr(egress_phase, "sh", sh)
    monkeypatch.setattr(egress_phase, "relabel", relabel)
    return done


async def test_agents_are_stopped_before_the_pod_grades_with_the_tasks_network(calls: Calls) -> None:
    logs = await egress_phase.enter_grading(context('[environment]\nnetwork_mode = "allowlist"'), "pod-1")
    assert logs == {"lead-1.stdout.log": b"usage"}
    assert calls.seen == [("sh", STOP_THEN_TAR_LOGS), ("relabel", {L.PHASE: L.PHASE_GRADING, L.NETWORK: "allowlist"})]


async def test_a_surviving_agent_keeps_the_pod_in_the_agents_phase(calls: Calls) -> None:
    calls.left = "left 1"
    with pytest.raises(StepFailure) as failure:
        await egress_phase.enter_grading(context(), "pod-1")
    assert failure.value.reason == "InternalError" and "left 1" in failure.value.message
    assert calls.seen == [("sh", STOP_THEN_TAR_LOGS)]  # never relabelled


@pytest.mark.parametrize(("error", "reason"), [
    (ApiException(status=403), "ApiServerUnavailable"),
    (ApiException(status=404), "PodDeleted"),
    (egress_phase.RelabelError("pod pod-1 is gone"), "PodDeleted"),
    (egress_phase.RelabelError("pod pod-1 reads back {...}"), "InternalError"),
])
async def test_a_failed_relabel_is_a_step_failure(monkeypatch: pytest.MonkeyPatch, calls: Calls,
                                                  error: Exception, reason: str) -> None:
    async def refuse(*args: Any) -> dict[str, str]:
        raise error

    monkeypatch.setattr(egress_phase, "relabel", refuse)
    with pytest.raises(StepFailure) as failure:
        await egress_phase.enter_grading(context(), "pod-1")
    assert failure.value.reason == reason


class FakeKube:
    """read_pod/patch_pod_labels of kube.objects, on one pod's labels."""

    def __init__(self, labels: dict[str, str] | None, *, drop: bool = False) -> None:
        self.labels, self.drop, self.patches = labels, drop, 0


async def test_relabel_patches_once_and_reads_back(monkeypatch: pytest.MonkeyPatch) -> None:
    kube = FakeKube({L.PHASE: L.PHASE_AGENTS, "other": "kept"})

    async def read_pod(k: FakeKube, namespace: str, name: str) -> dict[str, Any] | None:
        return None if k.labels is None else {"metadata": {"labels": dict(k.labels)}}

    async def patch_pod_labels(k: FakeKube, namespace: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
        k.patches += 1
        if not k.drop and k.labels is not None:
            k.labels.update(labels)
        return {"metadata": {"labels": dict(k.labels or {})}}  # the pod as stored, as the API answers

    monkeypatch.setattr(egress_phase.objects, "read_pod", read_pod)
    monkeypatch.setattr(egress_phase.objects, "patch_pod_labels", patch_pod_labels)
    wanted = {L.PHASE: L.PHASE_GRADING, L.NETWORK: "public"}
    found = await egress_phase.relabel(kube, "ns", "p", wanted)  # type: ignore[arg-type]
    assert found == {L.PHASE: L.PHASE_GRADING, L.NETWORK: "public", "other": "kept"} and kube.patches == 1
    await egress_phase.relabel(kube, "ns", "p", wanted)  # type: ignore[arg-type]
    assert kube.patches == 1  # already there: nothing patched
    lost = FakeKube({L.PHASE: L.PHASE_AGENTS}, drop=True)  # e.g. a mutating webhook undoing it
    with pytest.raises(egress_phase.RelabelError, match="reads back"):
        await egress_phase.relabel(lost, "ns", "p", wanted)  # type: ignore[arg-type]
    with pytest.raises(egress_phase.RelabelError, match="is gone"):
        await egress_phase.relabel(FakeKube(None), "ns", "p", wanted)  # type: ignore[arg-type]
