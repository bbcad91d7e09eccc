"""The worked example of docs/statistics.md: two small sweeps as TrialRecords, built by hand.

Four tasks, two attempts each. The baseline solves everything; the candidate fails both
attempts of ``reply-to-thread`` (its ``reply_to_thread`` dimension), one attempt each of
``user-mention`` (``user_p_tagged`` and, with it, ``reply_to_thread``) and ``multiline-message``,
and solves ``hello-file``. Every baseline trial costs $0.010 (ceiling $0.012) and 1,500 tokens,
every candidate trial $0.008 (ceiling $0.008) and 1,000 tokens.
"""

from __future__ import annotations

from buzz_operator.results.table import ResultsTable, tabulate
from buzz_operator.results.trial import TrialRecord

STACK = "ab" * 32
TASK_DIGEST = "cd" * 32


def record(
    sweep: str,
    task: str,
    attempt: int,
    rewards: dict[str, float],
    *,
    cost: tuple[float, float] = (0.010, 0.012),
    tokens: int = 1500,
    exception: str | None = None,
    verifier_broken: bool = False,
    stack: str = STACK,
    task_digest: str = TASK_DIGEST,
    condition: str = "oracle",
) -> TrialRecord:
    return TrialRecord(
        name=f"{sweep}-{task}-{attempt}",
        condition=condition,
        manifest_sha256=condition[0] * 64,
        task=task,
        reward=rewards.get("reward", 0.0),
        input_tokens=tokens - 100,
        output_tokens=100,
        cost_usd=cost[0],
        cost_usd_ceiling=cost[1],
        agent_seconds=10.0,
        total_seconds=20.0,
        outcome="error" if exception else "ok",
        reconciled=True,
        round_capped=False,
        verifier_broken=verifier_broken,
        stopped_without_done=False,
        timeout_multiplier=1.0,
        agents=2,
        attempt=attempt,
        stack_digest=stack,
        rewards=rewards,
        exception_type=exception,
        task_digest=task_digest,
    )


PASS = {"reward": 1.0}
THREAD_OK = {"reward": 1.0, "reply_to_thread": 1.0, "evidence_complete": 1.0}
THREAD_MISSED = {"reward": 0.0, "reply_to_thread": 0.0, "evidence_complete": 1.0}
MENTION_OK = {"reward": 1.0, "user_p_tagged": 1.0, "reply_to_thread": 1.0, "evidence_complete": 1.0}
MENTION_MISSED = {"reward": 0.0, "user_p_tagged": 0.0, "reply_to_thread": 0.0, "evidence_complete": 1.0}
LAYOUT_OK = {"reward": 1.0, "real_newlines": 1.0}
LAYOUT_MISSED = {"reward": 0.0, "real_newlines": 0.0}

BASELINE_PLAN = {
    "reply-to-thread": (THREAD_OK, THREAD_OK),
    "user-mention": (MENTION_OK, MENTION_OK),
    "multiline-message": (LAYOUT_OK, LAYOUT_OK),
    "hello-file": (PASS, PASS),
}
CANDIDATE_PLAN = {
    "reply-to-thread": (THREAD_MISSED, THREAD_MISSED),
    "user-mention": (MENTION_OK, MENTION_MISSED),
    "multiline-message": (LAYOUT_MISSED, LAYOUT_OK),
    "hello-file": (PASS, PASS),
}


def sweep(name: str, plan: dict[str, tuple[dict[str, float], ...]], **kwargs: object) -> ResultsTable:
    return tabulate(
        name,
        [
            record(name, task, i, rewards, **kwargs)
            for task, runs in plan.items()
            for i, rewards in enumerate(runs, 1)
        ],  # type: ignore[arg-type]
    )


def baseline() -> ResultsTable:
    return sweep("demo-oracle", BASELINE_PLAN)


def candidate(**kwargs: object) -> ResultsTable:
    return sweep("demo-naive", CANDIDATE_PLAN, cost=(0.008, 0.008), tokens=1000, condition="naive", **kwargs)
