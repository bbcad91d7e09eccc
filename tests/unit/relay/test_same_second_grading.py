"""A team that answers in the task's own second scores what it earned (docs/evidence.md#order).

Every event of these trials carries one `created_at`, as an agent that answers within a second
of the task gets. Block's relay returns same-second events by id, so the task's place among them
is chance; the evidence must put every answer after the task whatever the relay's order, and the
tasks' own verifiers, which read the messages after the task by position, must score the oracle
1.0. The seed's order (`created_at` alone) is graded beside it to show the case is real: it loses
answers the causal order keeps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.dev.agent.nostr import sign_event, tag_values, thread_tags
from buzz_operator.relay.evidence import build_evidence
from buzz_operator.relay.tenant_models import DirectoryIdentity, SeatIdentity, TenantHandle, UserIdentity

from tests.unit.agent.suite_play import play
from tests.unit.agent.suite_trial import (
    BASE_TIME,
    CHANNEL,
    EXPECTED_FAILURES,
    Identity,
    Store,
    Trial,
    grade,
    verifiers,
)

pytestmark = pytest.mark.timeout(120)


class OneSecond(Store):
    """A relay clock that never moves: every event is signed in the same second."""

    def __init__(self, second: int = BASE_TIME) -> None:
        super().__init__()
        self.second = second

    def tick(self) -> int:
        return self.second


RelayOrder = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
ORDERS: dict[str, RelayOrder] = {
    "by id": lambda events: sorted(events, key=lambda e: e["id"]),
    "by id, descending": lambda events: sorted(events, key=lambda e: e["id"], reverse=True),
    "newest arrival first": lambda events: list(reversed(events)),
}


def handle_of(trial: Trial) -> TenantHandle:
    return TenantHandle(
        run_id="run-suite", trial_id="trial-0001", manifest_sha256="e" * 64, channel_id=CHANNEL,
        channel_name="t-trial", relay_url="ws://localhost:3600",
        seats=(SeatIdentity(trial.orchestrator.name, "orchestrator", "lead", trial.orchestrator.pubkey, "ep"),),
        user=UserIdentity(trial.user.name, trial.user.pubkey, f"task-user:{trial.task}"),
        directory=tuple(DirectoryIdentity(i.name, i.role, i.pubkey, i.key, i.about) for i in trial.fixture.directory),
        task_name=trial.task,
    )


def channel_events(trial: Trial) -> list[dict[str, Any]]:
    return [e for e in trial.store.events if e["kind"] == 9 and CHANNEL in tag_values(e, "h")]


def project_evidence(trial: Trial, order: RelayOrder) -> dict[str, Any]:
    assert trial.task_event is not None
    return build_evidence(handle_of(trial), order(channel_events(trial)), task_event_id=trial.task_event["id"],
                          completion_message_id=None, scripted_events=trial.scripted_rows)


def rewards(task: str, evidence: dict[str, Any]) -> list[float]:
    return [metrics["reward"] for metrics in grade(task, evidence).values()]


@pytest.mark.parametrize("order_name", list(ORDERS))
@pytest.mark.parametrize("task", list(EXPECTED_FAILURES))
async def test_the_oracle_answering_in_the_task_second_scores_one(task: str, order_name: str, tmp_path: Path) -> None:
    trial, _ = await play(task, "oracle", [[0], list(range(1, 1 + len(Trial(task, "").fixture.scripted)))]
                          if Trial(task, "").fixture.scripted else [[0]], tmp_path, store=OneSecond())
    assert {e["created_at"] for e in channel_events(trial)} == {BASE_TIME} and trial.posted()
    evidence = project_evidence(trial, ORDERS[order_name])
    ids = [m["id"] for m in evidence["messages"]]
    assert ids[0] == trial.task_event["id"]
    # scripted events in the order they were posted, each after the task
    scripted = [e["id"] for e in trial.scripted_events]
    assert [i for i in ids if i in scripted] == scripted
    assert rewards(task, evidence) and all(r == 1.0 for r in rewards(task, evidence))


ANSWERS = {  # a correct final answer to each task, and the user the task's verifier expects
    "user-mention": ("John Vincent Doe", "The total annual cost is $5,328 (12 seats x $37 x 12 months)."),
    "reply-to-thread": ("benchmark-user", "Month 6 revenue: $160,811\nMonth 6 expenses: $84,462\n"
                                          "Cumulative operating profit: $374,470"),
}


@pytest.mark.parametrize("task", list(ANSWERS))
def test_a_same_second_answer_whose_id_sorts_first_reads_after_the_task(task: str) -> None:
    """The two verifiers the loss was found with (tasks/reply-to-thread, tasks/user-mention): a
    correct answer in the task's second whose id sorts before the task's scores 1.0 under the
    causal order and 0.0 under the seed's, which is the case the causal order exists for."""
    user, content = ANSWERS[task]
    trial = Trial(task, "question", store=OneSecond())
    trial.user = Identity(user, "user", identity_id=f"user:{user}")
    (task_event,) = trial.publish()
    nonce = 0
    while True:  # each nonce is a fair coin on the two ids
        tags = [["h", CHANNEL], *thread_tags(task_event), ["p", trial.user.pubkey], ["nonce", str(nonce)]]
        answer = sign_event(trial.orchestrator.keys, 9, content, tags, created_at=BASE_TIME)
        if answer["id"] < task_event["id"]:
            break
        nonce += 1
    trial.store.events.append(answer)
    causal = project_evidence(trial, ORDERS["by id"])
    assert [m["id"] for m in causal["messages"]] == [task_event["id"], answer["id"]]
    graded = len(verifiers(task))  # the project's, and Block's when BUZZ_DATASET_DIR names them
    assert rewards(task, causal) == [1.0] * graded
    # the seed's stable sort on one second leaves the relay's (id) order as it is
    seed = {**causal, "messages": causal["messages"][::-1]}
    assert rewards(task, seed) == [0.0] * graded
