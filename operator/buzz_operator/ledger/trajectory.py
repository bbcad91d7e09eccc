"""The trial's team trajectory in Harbor's ATIF (docs/trajectory.md): ``agent/trajectory.json``.

One root trajectory, the team's conversation: every message of the trial's channel in the
evidence's order (docs/evidence.md#order), the user's as ``user`` steps, each seat's as ``agent``
steps that name the seat, its thread and its mentions and point at the seat's own trajectory,
anything else (scripted actors, directory bots) as ``system`` steps. Embedded in it, one
subagent trajectory per seat (ATIF v1.7 ``subagent_trajectories``): the seat's system prompt,
then per turn what buzz-acp handed it (the Buzz events the turn delivered, with their text from
the evidence) and what it did (the tool calls buzz-acp logged, the messages it posted in the
turn, the turn's metered tokens). Totals come from the seats' receipts, so the trajectory's
figures are the bundle's.

``team_trajectory`` is pure: documents and parsed logs in, a JSON document out;
``write_trajectory`` reads them from the bundle directory and writes the file. Harbor's own ``Trajectory`` model
validates it in the Harbor tier; this module writes no key Harbor's models forbid.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from buzz_operator.ledger.accounting import SeatLike, TrialAccounting
from buzz_operator.ledger.agent_log import find_seat_logs
from buzz_operator.ledger.harbor_result import AGENT_NAME, AGENT_VERSION
from buzz_operator.ledger.receipt import SeatReceipt
from buzz_operator.ledger.seat_turns import SeatTurn, seat_turns

# ATIF-v1.7 added subagent_trajectories and trajectory_id, the newest feature used here; Harbor
# 0.25 and 0.26 both read it.
ATIF_VERSION = "ATIF-v1.7"
SEAT_AGENT = "buzz-agent"
TRAJECTORY_FILE = "trajectory.json"
EVIDENCE_FILE = "buzz-evidence.json"


@dataclass(frozen=True)
class SeatRecord:
    """What the bundle knows of one seat."""

    seat_id: str
    role: str
    model: str | None
    prompt: str | None
    turns: Sequence[SeatTurn]
    receipt: SeatReceipt | None


def _stamp(created_at: object) -> str | None:
    if isinstance(created_at, int | float) and not isinstance(created_at, bool):
        return datetime.fromtimestamp(created_at, UTC).isoformat().replace("+00:00", "Z")
    return None


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _messages(evidence: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    messages = (evidence or {}).get("messages")
    return [m for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []


def _names(evidence: Mapping[str, Any] | None) -> dict[str, str]:
    """pubkey → identity name, from the evidence's identities and directory."""
    names: dict[str, str] = {}
    identities = (evidence or {}).get("identities")
    for name, identity in (identities.items() if isinstance(identities, Mapping) else []):
        if isinstance(identity, Mapping) and isinstance(identity.get("pubkey"), str):
            names[identity["pubkey"]] = str(name)
    for entry in (evidence or {}).get("directory") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("pubkey"), str):
            names.setdefault(entry["pubkey"], str(entry.get("name") or entry["pubkey"][:8]))
    return names


def _message_extra(message: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    mentioned = [p for p in message.get("mentioned_pubkeys") or [] if isinstance(p, str)]
    return {
        "event_id": message.get("id"),
        "author": message.get("author"),
        "author_role": message.get("author_role"),
        "channel_id": message.get("channel_id"),
        "reply_to_event_id": message.get("reply_to_event_id"),
        "mentions": [names.get(p, p) for p in mentioned],
    }


def _root_steps(evidence: Mapping[str, Any] | None, seats: Mapping[str, SeatRecord]) -> list[dict[str, Any]]:
    names = _names(evidence)
    steps: list[dict[str, Any]] = []
    for message in _messages(evidence):
        author = str(message.get("author") or "")
        step: dict[str, Any] = {"step_id": len(steps) + 1, "timestamp": _stamp(message.get("created_at"))}
        if author in seats:
            step |= {"source": "agent", "model_name": seats[author].model}
        else:
            step["source"] = "user" if message.get("author_role") == "user" else "system"
        step["message"] = str(message.get("content") or "")
        if author in seats:  # the seat's own steps: its subagent trajectory
            step["observation"] = {"results": [{"subagent_trajectory_ref": [{"trajectory_id": author}]}]}
        step["extra"] = _message_extra(message, names)
        steps.append(step)
    if not steps:
        steps.append({"step_id": 1, "source": "system",
                      "message": "the trial's channel left no evidence: no message was exported"})  # fmt: skip
    return [{k: v for k, v in step.items() if v is not None} for step in steps]


def _turn_posts(turns: Sequence[SeatTurn], posts: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Each post of the seat under the turn it was made in: the turn whose span holds its time
    (a post is stamped to the second), else the last turn started before it, else the first."""
    spans = [(_epoch(t.started), _epoch(t.ended)) for t in turns]
    placed: list[list[Mapping[str, Any]]] = [[] for _ in turns]
    for post in posts:
        at = post.get("created_at")
        at = float(at) if isinstance(at, int | float) else None
        index = 0
        if at is not None:
            inside = [i for i, (s, e) in enumerate(spans) if s is not None and s - 1 <= at <= (e if e else s) + 1]
            before = [i for i, (s, _) in enumerate(spans) if s is not None and s <= at]
            index = inside[-1] if inside else (before[-1] if before else 0)
        placed[index].append(post)
    return placed


def _delivered_text(turn: SeatTurn, by_id: Mapping[str, Mapping[str, Any]]) -> str:
    lines = []
    for event_id in turn.delivered:
        if (message := by_id.get(event_id)) is not None:
            lines.append(f"{message.get('author') or 'unknown'}: {message.get('content') or ''}")
        else:
            lines.append(f"(event {event_id}: not among the channel's exported messages)")
    if lines:
        return "\n\n".join(lines)
    return "a turn began; buzz-acp logged no delivery receipt for it"


def _turn_steps(turn: SeatTurn, index: int, posts: Sequence[Mapping[str, Any]],
                by_id: Mapping[str, Mapping[str, Any]], model: str | None) -> list[dict[str, Any]]:
    handed = {"source": "user", "timestamp": turn.started, "message": _delivered_text(turn, by_id),
              "extra": {"turn": index, "delivered_event_ids": list(turn.delivered), "label": turn.label}}  # fmt: skip
    did: dict[str, Any] = {"source": "agent", "timestamp": turn.ended or turn.started, "model_name": model,
                           "message": "\n\n".join(str(p.get("content") or "") for p in posts)}  # fmt: skip
    if turn.tool_calls:
        ids = [c.call_id or f"turn-{index}-call-{n}" for n, c in enumerate(turn.tool_calls, 1)]
        did["tool_calls"] = [{"tool_call_id": i, "function_name": c.title, "arguments": {}, "extra": {"kind": c.kind}}
                             for i, c in zip(ids, turn.tool_calls, strict=True)]  # fmt: skip
        did["observation"] = {"results": [{"source_call_id": i, "content": f"status: {c.status or 'unknown'}"}
                                          for i, c in zip(ids, turn.tool_calls, strict=True)]}  # fmt: skip
    if turn.usage_lines:
        metrics: dict[str, Any] = {"prompt_tokens": turn.input_tokens, "completion_tokens": turn.output_tokens}
        if turn.cached_tokens is not None:
            metrics["cached_tokens"] = turn.cached_tokens
        did["metrics"] = metrics
    did["extra"] = {"turn": index, "ended": turn.end_marker, "posted_event_ids": [p.get("id") for p in posts]}
    return [{k: v for k, v in step.items() if v is not None} for step in (handed, did)]


def _final_metrics(receipts: Sequence[SeatReceipt], steps: int) -> dict[str, Any]:
    return {
        "total_prompt_tokens": sum(r.input_tokens for r in receipts),
        "total_completion_tokens": sum(r.output_tokens for r in receipts),
        "total_cost_usd": sum(r.cost_usd for r in receipts),
        "total_steps": steps,
    }


def _seat_trajectory(seat: SeatRecord, evidence: Mapping[str, Any] | None, stack_version: str) -> dict[str, Any]:
    messages = _messages(evidence)
    by_id = {str(m.get("id")): m for m in messages}
    posts = [m for m in messages if m.get("author") == seat.seat_id]
    steps: list[dict[str, Any]] = []
    if seat.prompt is not None:
        steps.append({"source": "system", "message": seat.prompt, "extra": {"file": f"{seat.seat_id}.system-prompt.md"}})
    placed = _turn_posts(seat.turns, posts) if seat.turns else []
    for index, (turn, turn_posts) in enumerate(zip(seat.turns, placed, strict=True), 1):
        steps.extend(_turn_steps(turn, index, turn_posts, by_id, seat.model))
    if not seat.turns:
        unplaced = "\n\n".join(str(p.get("content") or "") for p in posts)
        steps.append({"source": "system", "message": "the seat took no turn its logs record"
                      + (f"; it posted:\n\n{unplaced}" if posts else "")})  # fmt: skip
    for number, step in enumerate(steps, 1):
        step["step_id"] = number
    agent: dict[str, Any] = {"name": SEAT_AGENT, "version": stack_version, "model_name": seat.model,
                             "extra": {"seat": seat.seat_id, "role": seat.role}}  # fmt: skip
    document: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "trajectory_id": seat.seat_id,
        "agent": {k: v for k, v in agent.items() if v is not None},
        "steps": [{"step_id": s.pop("step_id"), **s} for s in steps],
    }
    if seat.receipt is not None:
        document["final_metrics"] = _final_metrics([seat.receipt], len(steps))
    return document


def team_trajectory(
    *,
    trial_name: str,
    trial_id: str,
    condition: str,
    manifest_sha256: str,
    orchestrator_model: str | None,
    evidence: Mapping[str, Any] | None,
    seats: Sequence[SeatRecord],
    stack_version: str,
) -> dict[str, Any]:
    """The trial's ATIF document: the conversation, with one embedded trajectory per seat."""
    by_seat = {seat.seat_id: seat for seat in seats}
    steps = _root_steps(evidence, by_seat)
    agent: dict[str, Any] = {"name": AGENT_NAME, "version": AGENT_VERSION, "model_name": orchestrator_model,
                             "extra": {"condition": condition, "manifest_sha256": manifest_sha256,
                                       "seats": {s.seat_id: s.model for s in seats}}}  # fmt: skip
    receipts = [seat.receipt for seat in seats if seat.receipt is not None]
    return {
        "schema_version": ATIF_VERSION,
        "session_id": trial_id or trial_name,
        "trajectory_id": trial_name,
        "agent": {k: v for k, v in agent.items() if v is not None},
        "steps": steps,
        "notes": "The team's conversation in its channel; each seat's turns are its subagent trajectory "
                 "(docs/trajectory.md). Tool calls carry no arguments or output: buzz-acp logs neither.",
        "final_metrics": _final_metrics(receipts, len(steps)),
        "subagent_trajectories": [_seat_trajectory(seat, evidence, stack_version) for seat in seats],
    }


def write_trajectory(
    bundle_dir: Path,
    *,
    trial_name: str,
    trial_id: str,
    manifest: Any,
    seats: Sequence[SeatLike],
    accounting: TrialAccounting,
    stack_version: str,
) -> Path | None:
    """Build the trajectory from the bundle's files (evidence, prompts, seat logs) and write it
    beside the bundle, where Harbor's viewer looks: ``<trial>/agent/trajectory.json``. Never
    raises: a trajectory that cannot be made costs the trial nothing (None is returned)."""
    target = bundle_dir.parent / TRAJECTORY_FILE
    try:
        evidence_path = bundle_dir / EVIDENCE_FILE
        evidence = json.loads(evidence_path.read_text(encoding="utf-8")) if evidence_path.is_file() else None
        receipts = {r.agent_id: r for r in accounting.receipts}
        records = []
        for seat in seats:
            prompt = bundle_dir / f"{seat.seat_id}.system-prompt.md"
            records.append(SeatRecord(
                seat_id=seat.seat_id, role=seat.kind, model=seat.model_revision or None,
                prompt=prompt.read_text(encoding="utf-8", errors="replace") if prompt.is_file() else None,
                turns=seat_turns(find_seat_logs(bundle_dir, seat.seat_id)), receipt=receipts.get(seat.seat_id),
            ))  # fmt: skip
        orchestrator = next((s.model_revision for s in seats if s.kind == "orchestrator"), None)
        document = team_trajectory(
            trial_name=trial_name, trial_id=trial_id, condition=manifest.condition, manifest_sha256=manifest.sha256,
            orchestrator_model=orchestrator or None, evidence=evidence if isinstance(evidence, Mapping) else None,
            seats=records, stack_version=stack_version,
        )  # fmt: skip
        target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except Exception:  # the trial's outcome must never turn on its trajectory
        target.unlink(missing_ok=True)
        return None
    return target
