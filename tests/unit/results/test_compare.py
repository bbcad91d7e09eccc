"""A condition's statistics and the comparison of two sweeps, on the worked example of
docs/statistics.md (worked_example.py): every figure that has a closed form is checked against
the hand computation in the comments; the intervals against what must hold of any resample."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from buzz_operator.results import (
    COMPARE_SCHEMA,
    CompareError,
    ConditionStats,
    Resampling,
    comparison_document,
    side,
)
from buzz_operator.results.condition_stats import exclusion
from buzz_operator.results.table import tabulate

from tests.unit.results.worked_example import (
    BASELINE_PLAN,
    CANDIDATE_PLAN,
    PASS,
    THREAD_OK,
    baseline,
    candidate,
    record,
    sweep,
)

URL = "file:///bundles"


@pytest.fixture(scope="module")
def document() -> dict:
    return comparison_document([side(baseline(), URL), side(candidate(), URL)])


def test_document_validates_against_the_published_schema(document: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(COMPARE_SCHEMA)
    jsonschema.Draft202012Validator(COMPARE_SCHEMA).validate(document)
    extra = copy.deepcopy(document)
    extra["comparisons"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(COMPARE_SCHEMA).validate(extra)


def test_candidate_statistics_by_hand(document: dict) -> None:
    st = document["sweeps"][1]["statistics"]
    # per task passes 0/2, 1/2, 1/2, 2/2 (reply-to-thread, user-mention, multiline, hello-file):
    # pass rate = (0 + ½ + ½ + 1) / 4 = 0.5, which is pass@1
    assert st["pass_rate"]["estimate"] == 0.5 == st["pass_at_k"]["1"]["estimate"]
    # pass@2 per task: 0 (no pass), 1 − C(1,2)/C(2,2) = 1, 1, 1 → 3/4
    assert st["pass_at_k"]["2"]["estimate"] == 0.75
    # pass^2 per task: C(c,2)/C(2,2) is 1 only where both passed (hello-file) → 1/4; at k = 1 it
    # is the pass rate, as pass@1 is
    assert st["pass_hat_k"]["2"]["estimate"] == 0.25
    assert st["pass_hat_k"]["1"] == st["pass_at_k"]["1"] == st["pass_rate"]
    # 8 trials at $0.008 over 4 solved = $0.016 per solved task; tokens 1,000 each
    assert st["cost_usd"]["per_solved_task"] == {
        "floor": pytest.approx(0.016),
        "ceiling": pytest.approx(0.016),
    }
    assert st["cost_usd"]["per_trial"]["floor"] == pytest.approx(0.008) and st["tokens_per_trial"] == 1000
    assert (st["scored"], st["tasks"], st["solved"]) == (8, 4, 4)
    # a resample can at worst draw hello-file only (1.0) or reply-to-thread only (0.0)
    assert 0.0 <= st["pass_rate"]["low"] < 0.5 < st["pass_rate"]["high"] <= 1.0
    # reply_to_thread is graded by reply-to-thread (0/2) and user-mention (1/2): (0 + ½) / 2
    assert st["dimensions"]["reply_to_thread"] == {
        "tasks": 2,
        "trials": 4,
        "estimate": 0.25,
        "low": 0.0,
        "high": pytest.approx(0.75),
    }


def test_baseline_solves_everything_with_no_spread(document: dict) -> None:
    st = document["sweeps"][0]["statistics"]
    assert st["pass_rate"] == {"estimate": 1.0, "low": 1.0, "high": 1.0}
    # 8 × $0.010 over 8 solved; the ceiling 8 × $0.012 over 8
    assert st["cost_usd"]["per_solved_task"] == {
        "floor": pytest.approx(0.010),
        "ceiling": pytest.approx(0.012),
    }


def test_paired_difference_by_hand(document: dict) -> None:
    [pair] = document["comparisons"]
    p = pair["pass_rate"]
    # per-task differences candidate − baseline: −1, −½, −½, 0 → mean −0.5
    assert (p["baseline"], p["candidate"], p["difference"]["estimate"]) == (1.0, 0.5, -0.5)
    # the baseline always resamples to 2/2 and the candidate never above it: no resample is > 0;
    # every task drawn as reply-to-thread gives −1
    assert -1.0 <= p["difference"]["low"] < -0.5 < p["difference"]["high"] <= 0.0
    # exact sign flip: 2 of the 8 patterns of (−1, −½, −½) reach |2| (test_statistics.py) → 0.25
    assert p["p_value"] == 0.25
    assert (p["wins"], p["losses"], p["ties"], p["tasks"]) == (0, 3, 1, 4)
    assert [(t["task"], t["verdict"]) for t in pair["per_task"]] == [
        ("hello-file", "tie"),
        ("multiline-message", "loss"),
        ("reply-to-thread", "loss"),
        ("user-mention", "loss"),
    ]
    # $/trial 0.008 − 0.010; $/solved 0.016 − 0.010; tokens 1,000 − 1,500
    assert pair["cost_usd"]["per_trial"]["floor"]["difference"] == pytest.approx(-0.002)
    assert pair["cost_usd"]["per_solved_task"]["floor"]["difference"] == pytest.approx(0.006)
    assert pair["tokens_per_trial"]["difference"] == -500
    assert pair["warnings"] == [] and pair["unpaired"] == {"baseline_only": [], "candidate_only": []}


def test_dimension_differences_worst_first(document: dict) -> None:
    [pair] = document["comparisons"]
    dims = {d["dimension"]: d for d in pair["dimensions"]}
    assert [d["dimension"] for d in pair["dimensions"]] == [
        "reply_to_thread",
        "real_newlines",
        "user_p_tagged",
        "evidence_complete",
    ]
    # reply_to_thread: 1 → (0 + ½)/2, differences −1 and −½; of the 4 sign patterns ±1 ±½
    # (1.5, 0.5, −0.5, −1.5) 2 reach |1.5| → p = 0.5
    rtt = dims["reply_to_thread"]
    assert (rtt["baseline"], rtt["candidate"], rtt["difference"]["estimate"], rtt["p_value"]) == (
        1.0,
        0.25,
        -0.75,
        0.5,
    )
    assert (rtt["wins"], rtt["losses"], rtt["ties"]) == (0, 2, 0)
    # one task, one difference: both signs reach it → p = 1
    assert dims["user_p_tagged"]["p_value"] == 1.0 and dims["user_p_tagged"]["tasks"] == 1
    assert dims["evidence_complete"]["difference"] == {"estimate": 0.0, "low": 0.0, "high": 0.0}


def test_different_task_digests_are_refused_naming_the_tasks() -> None:
    changed = side(candidate(task_digest="ef" * 32), URL)
    with pytest.raises(
        CompareError,
        match=r"different versions of task\(s\) hello-file, multiline-message, "
        r"reply-to-thread, user-mention",
    ):
        comparison_document([side(baseline(), URL), changed])
    # lock.json's digests win over the trials' task_checksum: one task changed there
    lock = {"tasks": {"reply-to-thread": "ef" * 32}}
    with pytest.raises(CompareError, match=r"task\(s\) reply-to-thread \("):
        comparison_document([side(baseline(), URL), side(candidate(), URL, lock)])


def test_different_stacks_pair_with_a_warning() -> None:
    document = comparison_document([side(baseline(), URL), side(candidate(stack="ef" * 32), URL)])
    [warning] = document["comparisons"][0]["warnings"]
    assert warning.startswith("WARNING: the stacks differ (demo-oracle abababab, demo-naive efefefef)")
    assert "base prompt" in warning
    # lock.json's stack digest is the sweep's own record
    lock = {"stack": {"digest": "12" * 32}}
    assert (
        "efefefef"
        not in comparison_document([side(baseline(), URL), side(candidate(), URL, lock)])["comparisons"][0][
            "warnings"
        ][0]
    )


def test_tasks_in_one_sweep_only_are_left_out_and_named() -> None:
    fewer = sweep(
        "demo-naive", {k: v for k, v in CANDIDATE_PLAN.items() if k != "hello-file"}, condition="naive"
    )
    [pair] = comparison_document([side(baseline(), URL), side(fewer, URL)])["comparisons"]
    assert pair["unpaired"] == {"baseline_only": ["hello-file"], "candidate_only": []}
    # three tasks: −1, −½, −½ → mean −2/3
    assert pair["pass_rate"]["tasks"] == 3 and pair["pass_rate"]["difference"]["estimate"] == pytest.approx(
        -2 / 3
    )


def test_a_sweep_of_two_experiments_is_refused() -> None:
    mixed = tabulate("two", [*baseline().trials, *candidate().trials])
    with pytest.raises(CompareError, match="holds 2 experiments"):
        side(mixed, URL)
    with pytest.raises(CompareError, match="no committed trials"):
        side(tabulate("none", []), URL)
    with pytest.raises(CompareError, match="at least two sweeps"):
        comparison_document([side(baseline(), URL)])
    with pytest.raises(CompareError, match="named twice"):
        comparison_document([side(baseline(), URL), side(baseline(), URL)])


def test_no_task_in_common_is_refused() -> None:
    other = sweep("other", {"cross-thread-requests": (PASS,)})
    with pytest.raises(CompareError, match="no task in common"):
        comparison_document([side(baseline(), URL), side(other, URL)])


def test_broken_and_infra_trials_are_left_out_and_counted() -> None:
    trials = [
        record("s", "a", 1, THREAD_OK),
        record("s", "a", 2, {"reward": 0.0}, exception="VerifierBroken"),  # broken: the reason
        record("s", "a", 3, {"reward": 0.0}, verifier_broken=True),  # broken: a health marker (docs/failures.md#verifier-health)
        record("s", "b", 1, {"reward": 0.0}, exception="PodLost"),  # infra: retries ran out
        record("s", "b", 2, {"reward": 0.0}, exception="AgentTimeout"),  # the team's outcome: scored
        record("s", "b", 3, {"reward": 0.0}, exception="RuntimeLaunchError"),  # unknown: scored, as the seed
    ]
    assert [exclusion(t) for t in trials] == [
        "broken" if i in (1, 2) else "infra" if i == 3 else None for i in range(6)
    ]
    st = ConditionStats.of(trials).document(Resampling())
    # scored: a/1 (pass), b/2, b/3 (fail): per task a 1/1, b 0/2 → (1 + 0) / 2
    assert st["excluded"] == {"broken": 2, "infra": 1} and st["scored"] == 3
    assert st["pass_rate"]["estimate"] == 0.5


def test_nothing_solved_has_no_cost_per_solved_task() -> None:
    st = side(sweep("none-solved", {"a": ({"reward": 0.0},)}), URL).stats
    assert st.cost_per_solved(ceiling=False) is None and st.solved == 0


def test_plans_are_the_documented_ones() -> None:
    # docs/statistics.md quotes these plans; a change here must change the document too
    assert (
        [len(v) for v in BASELINE_PLAN.values()] == [2, 2, 2, 2] == [len(v) for v in CANDIDATE_PLAN.values()]
    )


def test_the_documented_intervals(document: dict) -> None:
    # docs/statistics.md quotes these (seed 0, 2,000 resamples): Random.random() is reproducible
    # for a seed across Python versions, so they are the same on every machine
    st = document["sweeps"][1]["statistics"]
    [pair] = document["comparisons"]
    dims = {d["dimension"]: d["difference"] for d in pair["dimensions"]}
    assert st["pass_rate"] == {"estimate": 0.5, "low": 0.125, "high": 0.875}
    assert st["pass_at_k"]["2"] == {"estimate": 0.75, "low": 0.25, "high": 1.0}
    assert st["pass_hat_k"]["2"] == {"estimate": 0.25, "low": 0.0, "high": 0.75}
    assert pair["pass_rate"]["difference"] == {"estimate": -0.5, "low": -0.875, "high": -0.125}
    assert dims["reply_to_thread"] == {"estimate": -0.75, "low": -1.0, "high": -0.25}
    assert dims["real_newlines"] == dims["user_p_tagged"] == {"estimate": -0.5, "low": -1.0, "high": 0.0}
