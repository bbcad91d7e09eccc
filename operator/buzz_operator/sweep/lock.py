"""The sweep's lock.json: the content digests a sweep's results depend on — every task, every
pinned prompt, persona and skill, every image reference, and the digest of every binary of the
agent stack as the preflight canary installed it — written once, before the first trial, next to
the bundles.

A sweep that finds a lock.json in its storage resumes into it only when nothing changed;
otherwise results of two different experiments would be mixed under one name (the Hawk and
Harbor "resume ran against changed tasks" reports in docs/bundle.md#lockjson). Pure: documents in,
documents out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from buzz_operator.api.stack import StackDigests, StackSource, stack_record
from buzz_operator.condition.manifest import ExperimentManifest
from buzz_operator.dataset.task import Task
from buzz_operator.ledger.harbor_config import sweep_job_config

LOCK_VERSION = 1


def pinned_artifacts(manifest: ExperimentManifest) -> dict[str, str]:
    """`{"<class>.prompt": sha256, "<class>.persona": …, "<class>.skill[i]": …}`."""
    pins: dict[str, str] = {}
    for entry in manifest.roster:
        pins[f"{entry.id}.prompt"] = entry.prompt.sha256
        if entry.persona is not None:
            pins[f"{entry.id}.persona"] = entry.persona.sha256
        for index, skill in enumerate(entry.skills):
            pins[f"{entry.id}.skill[{index}]"] = skill.sha256
    return pins


def sweep_lock(
    *,
    manifest: ExperimentManifest,
    dataset: str,
    tasks: Sequence[Task],
    task_images: Mapping[str, str],
    stack: StackSource,
    stack_digests: StackDigests | None,
    operator_image: str,
    origins: Mapping[str, Mapping[str, Any]] | None = None,
    headroom: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``stack_digests`` is what the preflight canary read (None when it could not start: the
    lock then records the image and layout only, and each trial's result.json its own digests).
    ``origins`` are the git origins of a registry or package dataset's tasks (Harbor TaskConfigs
    by task name), recorded so that config.json names them as Harbor would; the task digests,
    not the origins, decide whether a sweep may resume."""
    lock = {
        "version": LOCK_VERSION,
        "condition": manifest.condition,
        "conditionHash": manifest.sha256,
        "dataset": dataset,
        "tasks": {task.name: task.digest for task in sorted(tasks, key=lambda t: t.name)},
        "prompts": pinned_artifacts(manifest),
        "images": {
            "stack": stack.image,
            "operator": operator_image,
            "tasks": {name: task_images[name] for name in sorted(task_images)},
        },
        "stack": stack_record(stack, stack_digests),
    }
    if headroom is not None:  # the room each trial's box had: part of the experiment (docs/resources.md#headroom)
        lock["resources"] = dict(headroom)
    if origins:
        lock["origins"] = {name: dict(origins[name]) for name in sorted(origins)}
    return lock


def _stack_drift(old: Any, new: Any) -> list[str]:
    """A lock written before stacks were recorded, or by a sweep whose canary read no digests,
    cannot say what ran: only what both sides know is compared (each trial's result.json
    still keys its row by its own stack digest, so nothing is pooled unseen)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return []
    changes = []
    if old.get("layout") != new.get("layout"):
        changes.append(f"stack layout changed ({old.get('layout')} → {new.get('layout')})")
    if old.get("digest") and new.get("digest") and old["digest"] != new["digest"]:
        changes += _changed_keys("stack binary", old.get("binaries") or {}, new.get("binaries") or {}) or [
            f"stack digest changed ({_short(old['digest'])} → {_short(new['digest'])})"]
    return changes


def _changed_keys(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    changes = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            changes.append(f"{kind} {key} removed")
        elif key not in old:
            changes.append(f"{kind} {key} added")
        elif old[key] != new[key]:
            changes.append(f"{kind} {key} changed ({_short(old[key])} → {_short(new[key])})")
    return changes


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if len(text) == 64 else text


DEFAULT_HEADROOM = {"limitMultiple": 1.0, "cpuRequestFraction": 1.0, "memoryRequestFraction": 1.0}


def _room(headroom: Mapping[str, Any]) -> str:
    limit = headroom.get("limitMultiple")
    return (f"{'no limit' if limit is None else f'limits {limit:g}×'}, requests "
            f"{headroom.get('cpuRequestFraction', 1.0):g} CPU / {headroom.get('memoryRequestFraction', 1.0):g} memory")


def lock_drift(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> str | None:
    """None when `current` may resume into storage locked by `recorded`; else what changed.

    Tasks added or removed are drift too: pass@k over a different task set is another number.
    """
    if recorded.get("version") != current.get("version"):
        return f"lock.json version {recorded.get('version')!r} is not {current.get('version')!r}"
    changes: list[str] = []
    if recorded.get("conditionHash") != current.get("conditionHash"):
        changes.append(
            f"condition hash changed ({_short(recorded.get('conditionHash'))} → "
            f"{_short(current.get('conditionHash'))})"
        )
    if recorded.get("dataset") != current.get("dataset"):
        changes.append(f"dataset changed ({recorded.get('dataset')} → {current.get('dataset')})")
    changes += _changed_keys("task", recorded.get("tasks") or {}, current.get("tasks") or {})
    changes += _changed_keys("prompt", recorded.get("prompts") or {}, current.get("prompts") or {})
    old_images, new_images = recorded.get("images") or {}, current.get("images") or {}
    for role in ("stack", "operator"):
        if old_images.get(role) != new_images.get(role):
            changes.append(f"{role} image changed ({old_images.get(role)} → {new_images.get(role)})")
    changes += _changed_keys("task image", old_images.get("tasks") or {}, new_images.get("tasks") or {})
    changes += _stack_drift(recorded.get("stack"), current.get("stack"))
    # a lock from before headroom was recorded had the default box (1×, requests = limits)
    old_room, new_room = recorded.get("resources") or DEFAULT_HEADROOM, current.get("resources") or DEFAULT_HEADROOM
    if old_room != new_room:
        changes.append(f"resources changed ({_room(old_room)} → {_room(new_room)})")
    if not changes:
        return None
    more = f" (and {len(changes) - 3} more)" if len(changes) > 3 else ""
    return "; ".join(changes[:3]) + more


def sweep_config(name: str, namespace: str, spec: Mapping[str, Any], lock: Mapping[str, Any]) -> dict[str, Any]:
    """config.json of the sweep: a Harbor JobConfig (ledger/harbor_config.py — job name, attempts,
    timeout multiplier, the condition as the agent, every task) plus the BuzzSweep spec as
    submitted. Each trial's config.json is derived from it, as Harbor derives its trials'.

    The spec holds Secret *references* only, never key material, so it is stored whole.
    """
    return sweep_job_config(
        name=name, namespace=namespace, spec=spec, condition=lock.get("condition"),
        condition_hash=lock.get("conditionHash"), dataset=lock.get("dataset"), tasks=lock.get("tasks") or {},
        origins=lock.get("origins") or {},
    )
