"""The builtin suite through the operator with Block's real agents (BUZZ_STACK_DIR) and relay
(BUZZ_RELAY_BIN), the model played by the scripted endpoint.

Expected, as with the stand-ins (docs/scripted-model.md's table): the oracle scores 1.0 on every
task; toplevel fails each thread dimension and nothing else; naive fails, on each of Block's five
newest tasks, the dimensions of the mistake that task exists to catch. The receipts are priced
from the real buzz-acp's usage lines, so their token totals must equal what the scripted model
reported for the requests it answered (its log has one line per request)."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from buzz_operator.api.common import GROUP, VERSION
from kopf.testing import KopfRunner

from tests.e2e.test_demo_path import expected_misses
from tests.e2e.test_sweep import apply, condition, kubectl_json, wait_until
from tests.realstack.stack_fixtures import RELAY_URL, ROOT, ScriptedModel
from tests.support.harbor_venv import harbor_check, harbor_releases, problems

pytestmark = pytest.mark.realstack
SUITE = sorted(p.parent.name for p in (ROOT / "tasks").glob("*/task.toml"))
MODEL_KEY_ENV = "OPENAI_COMPAT_API_KEY"


def _secrets(namespace: str, owner_hex: str, relay_dsn: str, api_key: str) -> None:
    for name, data in (("relay-owner", {"owner-key": owner_hex, "postgres-dsn": relay_dsn}),
                       ("api-keys", {MODEL_KEY_ENV: api_key})):
        args = [f"--from-literal={k}={v}" for k, v in data.items()]
        subprocess.run(["kubectl", "-n", namespace, "create", "secret", "generic", name, *args], check=True,
                       capture_output=True)


def _condition(policy: str) -> dict[str, Any]:
    manifest = yaml.safe_load((ROOT / "manifests" / "standin-oracle.yaml").read_text())
    endpoint = f"scripted/{policy}"
    manifest["condition"] = f"real-{policy}"
    manifest["roster"][0]["endpoint"] = endpoint
    manifest["roster"][0]["model_revision"] = f"scripted-{policy}-1"
    manifest["prices"] = {endpoint: next(iter(manifest["prices"].values()))}
    return manifest


def _sweep(name: str, policy: str, store: Path, stack_image: str, model: ScriptedModel,
           mount: str = "copy", runtime_class: str | None = None) -> dict[str, Any]:
    endpoints = {f"scripted/{policy}": {"provider": "openai", "api_key_env": MODEL_KEY_ENV,
                                        "env": {"OPENAI_COMPAT_BASE_URL": model.base_url, "OPENAI_COMPAT_API": "chat"}}}
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzSweep", "metadata": {"name": name},
        "spec": {
            "condition": {"inline": _condition(policy)},
            "endpoints": {"config": endpoints, "secretRef": {"name": "api-keys"}},
            "dataset": {"builtin": {}}, "attempts": 1, "parallelism": 2,
            "relay": {"url": RELAY_URL, "serviceRef": {"name": "relay", "port": 3600},
                      "ownerKeySecretRef": {"name": "relay-owner", "key": "owner-key"},
                      "postgresDsnSecretRef": {"name": "relay-owner", "key": "postgres-dsn"}},
            "storage": {"url": f"file://{store}"}, "imagePullPolicy": "Never",
            "stack": {"image": stack_image, "layout": "folder", "mount": mount},
            **({"runtimeClassName": runtime_class} if runtime_class else {}),
        },
    }


def _model_usage(log: Path) -> dict[str, tuple[int, int]]:
    """(input, output) tokens the scripted model billed, per trial channel (its log names the
    channels of the events each request carried)."""
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    answered = [line for line in lines if line.get("status") == 200]
    assert answered, f"the scripted model answered no request: {log.read_text()[-2000:]}"
    out: dict[str, tuple[int, int]] = {}
    for line in answered:
        usage, [channel] = line["usage"], line["channels"]
        inputs, outputs = out.get(channel, (0, 0))
        out[channel] = (inputs + usage.get("prompt_tokens", usage.get("input_tokens", 0)),
                        outputs + usage.get("completion_tokens", usage.get("output_tokens", 0)))
    return out


def _check_billing(store: Path, sweep: str, billed: dict[str, tuple[int, int]]) -> None:
    """Each trial's receipts equal what the model billed for its channel — except where buzz-acp
    cancelled a turn (its cancel-and-merge fallback when an event arrives mid-turn: buzz-agent
    does not steer), whose in-flight request is billed but never logged, so no receipt can hold it
    (docs/real-stack.md). There the receipts must fall short, never exceed."""
    gaps = {}
    for bundle in (store / sweep).iterdir():
        if not (bundle / "result.json").is_file():
            continue
        channel = json.loads((bundle / "agent" / "buzz" / "buzz-evidence.json").read_text())["trial"]["channel_id"]
        rows = [json.loads(line) for line in (bundle / "agent" / "buzz" / "receipts.jsonl").read_text().splitlines()]
        receipts = (sum(int(r["input_tokens"]) for r in rows), sum(int(r["output_tokens"]) for r in rows))
        logs = "".join(p.read_text(errors="replace") for p in (bundle / "agent" / "buzz").glob("*.log"))
        model = billed.pop(channel, (0, 0))
        if "turn cancelled for" in logs:
            assert receipts[0] <= model[0] and receipts[1] <= model[1], (bundle.name, receipts, model)
            gaps[bundle.name] = (model[0] - receipts[0], model[1] - receipts[1])
        else:
            assert receipts == model, (bundle.name, receipts, model)
    assert billed == {}, f"the model billed channels of no trial: {billed}"
    print(f"{sweep}: tokens billed in cancelled turns and never logged (input, output): {gaps}")


def _print_same_second_answers(store: Path, sweep: str) -> None:
    """How many trials had an orchestrator answer in the task's own second, and how many of those
    an answer whose id sorts before the task's: Block's relay returned it first, and only the
    evidence's causal order (docs/evidence.md#order) read it after the task."""
    same = first = total = 0
    for evidence in (store / sweep).glob("*/agent/buzz/buzz-evidence.json"):
        document = json.loads(evidence.read_text())
        task = next(m for m in document["messages"] if m["id"] == document["task_event_id"])
        answers = [m for m in document["messages"] if m["author_role"] == "orchestrator"
                   and m["created_at"] == task["created_at"]]
        total += 1
        same += bool(answers)
        first += any(m["id"] < task["id"] for m in answers)
    print(f"{sweep}: {same} of {total} trials answered in the task's own second, {first} with an id before the task's")


def _check_trajectories(store: Path, sweep: str) -> None:
    """Block's buzz-acp logs turns, delivery receipts, tool calls and usage in its own words: each
    trial's team trajectory has one trajectory per seat, the orchestrator's with a turn that was
    handed the task and made tool calls, tokens that add up to its receipt, and Harbor's
    validator accepts the document (docs/trajectory.md)."""
    for bundle in (store / sweep).iterdir():
        if not (bundle / "result.json").is_file():
            continue
        document = json.loads((bundle / "agent" / "trajectory.json").read_text())
        receipts = {r["agent_id"]: r for r in map(json.loads, (bundle / "agent" / "buzz" / "receipts.jsonl").read_text().splitlines())}
        assert [t["trajectory_id"] for t in document["subagent_trajectories"]] == list(receipts), bundle.name
        lead = next(t for t in document["subagent_trajectories"] if receipts[t["trajectory_id"]]["role"] == "orchestrator")
        evidence = json.loads((bundle / "agent" / "buzz" / "buzz-evidence.json").read_text())
        handed = [s for s in lead["steps"] if s["source"] == "user"]
        assert any(evidence["task_event_id"] in s["extra"]["delivered_event_ids"] for s in handed), (bundle.name, handed)
        assert any(s.get("tool_calls") for s in lead["steps"]), (bundle.name, lead["steps"])
        metered = sum(s.get("metrics", {}).get("prompt_tokens", 0) for s in lead["steps"])
        assert metered == receipts[lead["trajectory_id"]]["input_tokens"], bundle.name
    reports = harbor_check(("sweep", store / sweep), release=harbor_releases()[-1])
    assert problems(reports) == [], problems(reports)


def _run_suite(policy: str, namespace: str, stack_image: str, model: ScriptedModel, owner_hex: str,
               relay_dsn: str, relay_log: object, tmp_path: Path, mount: str = "copy",
               runtime_class: str | None = None) -> None:
    api_key = f"scripted-{secrets.token_hex(16)}"
    _secrets(namespace, owner_hex, relay_dsn, api_key)
    store = tmp_path / "store"
    name = f"real-{policy}"
    args = ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]
    with KopfRunner(args, timeout=60) as runner:
        apply(namespace, _sweep(name, policy, store, stack_image, model, mount, runtime_class))

        def finished() -> dict[str, Any] | None:
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", name)
            done = condition(sweep, "Complete")
            return sweep if done and done["status"] == "True" else None

        sweep = wait_until(finished, 1500, f"sweep {name} to complete")
    assert runner.exception is None, runner.output

    trials = {t["spec"]["task"]: t["status"] for t in kubectl_json("-n", namespace, "get", "buzztrials")["items"]}
    assert sorted(trials) == SUITE, sorted(trials)
    failed: dict[str, list[str]] = {}
    for task, status in trials.items():
        assert status["phase"] == "Succeeded" and status["outcome"] == "ok", (task, status, relay_log)
        if status["reward"] < 1:
            failed[task] = sorted(k for k, v in (status.get("rewards") or {}).items() if k != "reward" and v < 1)
    expected = expected_misses(policy)
    assert failed == expected, (failed, {t: s.get("rewards") for t, s in trials.items()})

    for bundle in (store / name).iterdir():
        if not (bundle / "result.json").is_file():
            continue
        summary = json.loads((bundle / "agent" / "buzz" / "summary.json").read_text())
        assert summary["accounting"]["reconciled"], (bundle, summary["accounting"])
        assert summary["secret_scan"]["clean"], (bundle, summary["secret_scan"])
        everything = "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
        assert api_key not in everything and owner_hex not in everything
    _check_billing(store, name, _model_usage(model.log))
    _check_trajectories(store, name)
    _print_same_second_answers(store, name)
    assert sweep["status"]["meanReward"] == pytest.approx((len(SUITE) - len(expected)) / len(SUITE))


@pytest.mark.parametrize("policy", ["oracle", "toplevel", "naive"])
def test_builtin_suite_with_blocks_agents_and_relay(  # type: ignore[no-untyped-def]
    policy, namespace, crds, stack_image, real_relay, scripted_model, tmp_path: Path,
) -> None:
    _run_suite(policy, namespace, stack_image, scripted_model, real_relay.owner.secret_hex, real_relay.relay_dsn,
               real_relay.log, tmp_path)


@pytest.mark.parametrize("policy", ["oracle", "toplevel", "naive"])
def test_builtin_suite_with_blocks_agents_and_the_dev_relay(  # type: ignore[no-untyped-def]
    policy, namespace, crds, stack_image, cluster_relay, scripted_model, tmp_path: Path,
) -> None:
    """Block's agents against the project's development relay: the relay the demo and CI use must
    serve the real CLI and buzz-acp as Block's relay does."""
    _run_suite(policy, namespace, stack_image, scripted_model, cluster_relay.owner.secret_hex,
               cluster_relay.target.pg_dsn, "the dev relay's pod log", tmp_path)


def test_builtin_suite_with_blocks_agents_mounted_as_an_image_volume(  # type: ignore[no-untyped-def]
    namespace, crds, stack_image, cluster_relay, scripted_model, image_volumes, tmp_path: Path,
) -> None:
    """spec.stack.mount image with Block's multicall binary (docs/stack.md#mount): bin/ links into
    the read-only mount, sprig dispatching on the link's name, buzz-dev-mcp's shim linking its
    tools to the executable it finds under /opt/buzz-image — the suite as the copy runs it."""
    _run_suite("oracle", namespace, stack_image, scripted_model, cluster_relay.owner.secret_hex,
               cluster_relay.target.pg_dsn, "the dev relay's pod log", tmp_path, mount="image")


def test_builtin_suite_with_blocks_agents_under_gvisor(  # type: ignore[no-untyped-def]
    namespace, crds, stack_image, cluster_relay, scripted_model, tmp_path: Path,
) -> None:
    """Block's agents in gVisor's sandbox (the RuntimeClass gvisor, docs/isolation.md#gvisor):
    the oracle's suite scores as under runc — sprig's processes, buzz-dev-mcp's shell and the
    CLI all served by gVisor's kernel."""
    _run_suite("oracle", namespace, stack_image, scripted_model, cluster_relay.owner.secret_hex,
               cluster_relay.target.pg_dsn, "the dev relay's pod log", tmp_path, runtime_class="gvisor")
