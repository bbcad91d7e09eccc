"""lock.json: what a sweep's results depend on, and the refusal to resume into storage
locked by a different experiment, naming what changed."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from buzz_operator.api.stack import StackDigests, StackLayout, StackSource
from buzz_operator.condition.manifest import ExperimentManifest
from buzz_operator.dataset.task import load_task
from buzz_operator.pod.stack_install import manifest_digest
from buzz_operator.storage.file_store import FileStore
from buzz_operator.sweep.drive.documents import lock_digest, lock_storage
from buzz_operator.sweep.lock import lock_drift, pinned_artifacts, sweep_config, sweep_lock

REPO = Path(__file__).resolve().parents[3]
MANIFEST = ExperimentManifest.load(REPO / "manifests" / "standin-oracle.yaml")
TASKS = [load_task(REPO / "tasks" / name) for name in ("hello-file", "user-mention")]
IMAGES = {t.name: t.image_ref("docker.io/buzz-tasks", "builtin") for t in TASKS}
STACK = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER)
BINARIES = {"buzz-acp": "a" * 64, "buzz": "b" * 64}
DIGESTS = StackDigests(digest=manifest_digest(BINARIES), binaries=BINARIES)


def _lock(**changes: object) -> dict:
    args = {"manifest": MANIFEST, "dataset": "builtin", "tasks": TASKS, "task_images": IMAGES,
            "stack": STACK, "stack_digests": DIGESTS, "operator_image": "docker.io/buzz/operator:dev"}
    args.update(changes)
    return sweep_lock(**args)  # type: ignore[arg-type]


def test_lock_holds_every_task_prompt_and_image_digest() -> None:
    lock = _lock()
    assert lock["conditionHash"] == MANIFEST.sha256
    assert lock["tasks"] == {t.name: t.digest for t in TASKS}
    assert set(lock["prompts"]) == set(pinned_artifacts(MANIFEST))
    assert all(len(v) == 64 for v in lock["prompts"].values())
    assert lock["images"]["tasks"] == IMAGES
    assert lock_drift(lock, _lock()) is None
    assert lock_digest(lock) == lock_digest(json.loads(json.dumps(lock)))


def test_drift_names_the_task_prompt_and_image_that_changed() -> None:
    lock = _lock()
    changed_task = json.loads(json.dumps(lock))
    changed_task["tasks"]["hello-file"] = "0" * 64
    assert "task hello-file changed" in (lock_drift(lock, changed_task) or "")
    fewer = _lock(tasks=TASKS[:1], task_images={TASKS[0].name: IMAGES[TASKS[0].name]})
    message = lock_drift(lock, fewer) or ""
    assert "task user-mention removed" in message and "task image user-mention removed" in message
    moved = StackSource(image="example.org/stack:v2", layout=StackLayout.FOLDER)
    assert "stack image changed" in (lock_drift(lock, _lock(stack=moved)) or "")
    prompt = json.loads(json.dumps(lock))
    first = sorted(prompt["prompts"])[0]
    prompt["prompts"][first] = "f" * 64
    assert f"prompt {first} changed" in (lock_drift(lock, prompt) or "")
    assert "version" in (lock_drift({**lock, "version": 0}, lock) or "")


def test_lock_records_every_stack_binary_digest() -> None:
    lock = _lock()
    assert lock["stack"] == {"image": STACK.image, "layout": "folder", "digest": DIGESTS.digest, "binaries": BINARIES}
    assert lock["images"]["stack"] == STACK.image  # where earlier locks kept the reference
    unread = _lock(stack_digests=None)
    assert unread["stack"] == {"image": STACK.image, "layout": "folder", "digest": None, "binaries": None}


def test_drift_names_the_stack_binary_that_changed_under_the_same_tag() -> None:
    lock = _lock()
    rebuilt = {**BINARIES, "buzz-acp": "c" * 64}  # the tag moved: a new buzz-acp, a new base prompt
    message = lock_drift(lock, _lock(stack_digests=StackDigests(digest=manifest_digest(rebuilt), binaries=rebuilt)))
    assert message is not None and "stack binary buzz-acp changed (aaaaaaaaaaaa → cccccccccccc)" in message
    sprig = StackSource(image=STACK.image, layout=StackLayout.SPRIG)
    assert "stack layout changed (folder → sprig)" in (lock_drift(lock, _lock(stack=sprig)) or "")
    # what one side could not read is not drift: a lock written when the canary did not start,
    # or before stacks were recorded at all
    assert lock_drift(_lock(stack_digests=None), lock) is None
    assert lock_drift(lock, _lock(stack_digests=None)) is None
    assert lock_drift({k: v for k, v in lock.items() if k != "stack"}, lock) is None


def test_many_changes_are_counted_not_listed() -> None:
    lock = _lock()
    other = json.loads(json.dumps(lock))
    other["tasks"] = {f"t{i}": "0" * 64 for i in range(6)}
    message = lock_drift(lock, other) or ""
    assert message.count(";") == 2 and "more)" in message


def test_config_keeps_the_spec_and_names_the_job() -> None:
    spec = {"attempts": 3, "parallelism": 2, "timeoutMultiplier": 1.5, "dataset": {"builtin": {}}}
    config = sweep_config("demo", "ns", spec, _lock())
    assert config["job_name"] == "demo" and config["n_attempts"] == 3
    assert (config["timeout_multiplier"], config["n_concurrent_trials"]) == (1.5, 2)
    names = sorted(t.name for t in TASKS)
    # Harbor would fetch a `datasets` entry named "builtin" from its registry: tasks are listed
    assert config["datasets"] == [] and [t["path"] for t in config["tasks"]] == names
    assert {t["source"] for t in config["tasks"]} == {config["buzz_dataset"]["name"]}
    assert config["buzz_dataset"]["tasks"] == names
    [agent] = config["agents"]
    assert agent["kwargs"]["manifest_sha256"] == _lock()["conditionHash"]
    assert config["spec"] == spec


def test_config_defaults_follow_the_sweep_spec() -> None:
    config = sweep_config("demo", "ns", {}, _lock())
    assert (config["n_attempts"], config["timeout_multiplier"], config["n_concurrent_trials"]) == (1, 1.0, 4)


def test_storage_is_locked_once_and_refuses_a_different_experiment(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    lock = _lock()
    config = sweep_config("demo", "ns", {}, lock)
    assert asyncio.run(lock_storage(store, "demo", lock, config)) is None
    assert json.loads((tmp_path / "demo" / "lock.json").read_text()) == lock
    assert (tmp_path / "demo" / "config.json").exists()
    assert asyncio.run(lock_storage(store, "demo", lock, config)) is None  # resume: same experiment
    drift = asyncio.run(lock_storage(store, "demo", _lock(operator_image="x/op:2"), config))
    assert drift is not None and "operator image changed" in drift
    assert json.loads((tmp_path / "demo" / "lock.json").read_text()) == lock  # never overwritten
    (tmp_path / "demo" / "lock.json").write_text("{not json")
    assert asyncio.run(lock_storage(store, "demo", lock, config)) == "lock.json in storage is not JSON"
    shutil.rmtree(tmp_path / "demo")
