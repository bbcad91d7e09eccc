"""The team trajectory (ledger/trajectory.py; docs/trajectory.md): the channel's conversation as
the root, one subagent trajectory per seat with its turns, totals from the receipts; written
beside the bundle and covered by its secret scan. That Harbor's own models accept it is the
Harbor tier's part (tests/harbor/test_harbor_reads.py)."""

from __future__ import annotations

import json
from pathlib import Path

from buzz_operator.condition import ExperimentManifest, plan_seats
from buzz_operator.ledger import collect_accounting, scan_bundle
from buzz_operator.ledger.seat_turns import SeatTurn, ToolCall
from buzz_operator.ledger.trajectory import SeatRecord, team_trajectory, write_trajectory

from tests.unit.results.sweep_builder import MANIFEST

USER, LEAD, WORKER = "1" * 64, "2" * 64, "3" * 64


def message(event_id: str, author: str, role: str, pubkey: str, at: int, content: str, **extra: object) -> dict:
    return {"id": event_id, "author": author, "author_role": role, "pubkey": pubkey, "created_at": at,
            "content": content, "channel_id": "c", "mentioned_pubkeys": [], "reply_to_event_id": None, **extra}


EVIDENCE = {
    "identities": {"Ann": {"role": "user", "pubkey": USER}, "lead-1": {"role": "orchestrator", "pubkey": LEAD},
                   "worker-1": {"role": "worker", "pubkey": WORKER}},
    "messages": [
        message("e1", "Ann", "user", USER, 1_800_000_000, "@lead-1 add the numbers", mentioned_pubkeys=[LEAD]),
        message("e2", "lead-1", "orchestrator", LEAD, 1_800_000_004, "@worker-1 take it", reply_to_event_id="e1",
                mentioned_pubkeys=[WORKER]),
        message("e3", "bot", "scripted", "4" * 64, 1_800_000_005, "status: green"),
        message("e4", "worker-1", "worker", WORKER, 1_800_000_010, "it is 42", reply_to_event_id="e2"),
        message("e5", "lead-1", "orchestrator", LEAD, 1_800_000_020, "DONE: 42", reply_to_event_id="e1"),
    ],
}  # fmt: skip


def stamp(second: int) -> str:
    return f"2027-01-15T08:00:{second:02d}Z"  # 1_800_000_000 is 2027-01-15T08:00:00Z


def test_the_conversation_and_each_seats_turns() -> None:
    lead = SeatRecord("lead-1", "orchestrator", "opus", "You lead.", [
        SeatTurn(label="channel c", started=stamp(1), ended=stamp(6), end_marker="turn complete", delivered=["e1"],
                 tool_calls=[ToolCall("buzz send", "execute", "t1", "completed")], input_tokens=90,
                 output_tokens=9, usage_lines=2),
        SeatTurn(label="channel c", started=stamp(15), ended=stamp(21), delivered=["e4", "gone"]),
    ], None)  # fmt: skip
    worker = SeatRecord("worker-1", "worker", "haiku", None, [], None)
    doc = team_trajectory(trial_name="t-1", trial_id="trial-1", condition="duo", manifest_sha256="h",
                          orchestrator_model="opus", evidence=EVIDENCE, seats=[lead, worker], stack_version="v")
    assert [(s["step_id"], s["source"]) for s in doc["steps"]] == [
        (1, "user"), (2, "agent"), (3, "system"), (4, "agent"), (5, "agent")]
    second = doc["steps"][1]
    assert second["extra"]["mentions"] == ["worker-1"] and second["extra"]["reply_to_event_id"] == "e1"
    assert second["observation"]["results"][0]["subagent_trajectory_ref"] == [{"trajectory_id": "lead-1"}]
    assert second["timestamp"] == stamp(4) and second["model_name"] == "opus"
    [lead_doc, worker_doc] = doc["subagent_trajectories"]
    assert [s["source"] for s in lead_doc["steps"]] == ["system", "user", "agent", "user", "agent"]
    handed, did = lead_doc["steps"][1:3]
    assert handed["message"] == "Ann: @lead-1 add the numbers"
    assert did["message"] == "@worker-1 take it" and did["extra"]["posted_event_ids"] == ["e2"]
    assert did["tool_calls"][0]["tool_call_id"] == "t1" and did["metrics"] == {"prompt_tokens": 90, "completion_tokens": 9}
    assert "not among the channel's exported messages" in lead_doc["steps"][3]["message"]
    assert lead_doc["steps"][4]["extra"]["posted_event_ids"] == ["e5"]
    # a seat whose logs hold no turn still shows what it posted
    assert worker_doc["steps"] == [{"step_id": 1, "source": "system",
                                    "message": "the seat took no turn its logs record; it posted:\n\nit is 42"}]


def test_no_evidence_still_makes_a_document() -> None:
    doc = team_trajectory(trial_name="t", trial_id="", condition="c", manifest_sha256="h", orchestrator_model=None,
                          evidence=None, seats=[SeatRecord("solo-1", "orchestrator", None, None, [], None)],
                          stack_version="unknown")  # fmt: skip
    assert doc["session_id"] == "t" and doc["steps"][0]["source"] == "system"
    assert "model_name" not in doc["agent"] and doc["final_metrics"]["total_prompt_tokens"] == 0


def test_written_beside_the_bundle_with_the_receipts_totals(tmp_path: Path) -> None:
    manifest = ExperimentManifest.load(MANIFEST)
    seats = plan_seats(manifest)
    bundle = tmp_path / "agent" / "buzz"
    bundle.mkdir(parents=True)
    (bundle / f"{seats[0].seat_id}.stderr.log").write_text(
        "2027-01-15T08:00:01Z  INFO pool::prompt: turn starting for channel c\n"
        "2027-01-15T08:00:02Z DEBUG acp::usage: goose usage update session_id=s input=1000 output=100 cached=0\n"
        "2027-01-15T08:00:03Z  INFO buzz_acp: turn complete for channel c: end_turn\n")
    evidence = dict(EVIDENCE, messages=[*EVIDENCE["messages"], message("e9", "Ann", "user", USER, 1_800_000_030,
                                                                      "my key is trial-credential-0123456789abcdef")])
    (bundle / "buzz-evidence.json").write_text(json.dumps(evidence))
    accounting = collect_accounting(bundle, seats, manifest.prices)
    path = write_trajectory(bundle, trial_name="t-1", trial_id="trial-1", manifest=manifest, seats=seats,
                            accounting=accounting, stack_version="v")  # fmt: skip
    assert path == tmp_path / "agent" / "trajectory.json"
    doc = json.loads(path.read_text())
    assert [s["trajectory_id"] for s in doc["subagent_trajectories"]] == [s.seat_id for s in seats]
    assert doc["final_metrics"]["total_prompt_tokens"] == accounting.input_tokens == 1000
    assert doc["final_metrics"]["total_cost_usd"] == accounting.cost_usd
    # the secret scan reaches it, under its name beside the bundle
    scan = scan_bundle(bundle, ("trial-credential-0123456789abcdef",), {"../trajectory.json": path})
    assert {f.path for f in scan.findings} == {"buzz-evidence.json", "../trajectory.json"}, scan


def test_a_trajectory_that_cannot_be_made_costs_nothing(tmp_path: Path) -> None:
    manifest = ExperimentManifest.load(MANIFEST)
    bundle = tmp_path / "agent" / "buzz"
    bundle.mkdir(parents=True)
    (bundle / "buzz-evidence.json").write_text("{not json")
    assert write_trajectory(bundle, trial_name="t", trial_id="", manifest=manifest, seats=plan_seats(manifest),
                            accounting=collect_accounting(bundle, [], {}), stack_version="v") is None  # fmt: skip
    assert not (tmp_path / "agent" / "trajectory.json").exists()
