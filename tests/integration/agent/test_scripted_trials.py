"""The scripted conditions (manifests/scripted-*.yaml) on the stand-in stack: seats launched as the
operator launches them, against the dev relay, calling the scripted model endpoint
(`python -m buzz_operator.dev.model`, its own process on loopback) the way buzz-agent calls it, the
shell calls run by the built stack's `buzz` CLI, each trial graded by its task's real tests/test.sh
and its receipts computed by the real ledger from the seat logs.

The receipts must carry the endpoint's own token counts: what the scripted model logged for the
requests of a trial, summed, is exactly what the ledger bills for it. (hello-file writes to
/app, which a host test cannot offer; the e2e tier runs it in a pod.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from buzz_operator.condition import EndpointConfig, ExperimentManifest, plan_seats
from buzz_operator.dev.localstack import with_database
from buzz_operator.ledger.accounting import collect_accounting

from tests.support.databases import scratch_database

ROOT = Path(__file__).resolve().parents[3]
NATIVE_TASKS = ["reply-to-thread", "user-mention", "create-channel-invite-users",
                "read-named-path-outside-workspace"]

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def agent_db(pg_dsn: str) -> Iterator[str]:
    """A fresh relay database per trial, unlike the module-wide one of the stand-in tests: each
    trial's owner seeds its own directory under the same names, and a name search (`buzz users get
    --name`) must find one benchmark-user-07, as it does on a real relay's tenant."""
    import secrets

    with scratch_database(pg_dsn, f"scripted_{secrets.token_hex(6)}") as name:
        yield with_database(pg_dsn, name)


@dataclass
class ScriptedModel:
    base_url: str
    log: Path

    def mark(self) -> int:
        return self.log.stat().st_size

    def usage_since(self, mark: int) -> list[dict[str, Any]]:
        """The usage of each request answered since `mark`, as the scripted model logged it."""
        with self.log.open("rb") as handle:
            handle.seek(mark)
            lines = handle.read().decode().splitlines()
        return [json.loads(line)["usage"] for line in lines if '"usage"' in line]


@pytest.fixture(scope="module")
def scripted_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedModel]:
    log = tmp_path_factory.mktemp("scripted-model") / "stdout.log"
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "buzz_operator.dev.model", "--host", "127.0.0.1",
                                    "--port", "0"], stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if (match := re.search(r'"listening": "127\.0\.0\.1:(\d+)"', log.read_text())) or process.poll() is not None:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        assert match, log.read_text()
        yield ScriptedModel(f"http://127.0.0.1:{match.group(1)}/v1", log)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _condition(policy: str) -> ExperimentManifest:
    path = ROOT / "manifests" / f"scripted-{policy}.yaml"
    if path.exists():
        return ExperimentManifest.load(path)
    raw = yaml.safe_load((ROOT / "manifests" / "scripted-oracle.yaml").read_text())
    raw["condition"], raw["roster"][0]["endpoint"] = f"scripted-{policy}", f"scripted/{policy}"
    raw["prices"] = {f"scripted/{policy}": raw["prices"]["scripted/oracle"]}
    return ExperimentManifest.load(raw)


def _endpoints(model: ScriptedModel) -> EndpointConfig:
    """manifests/endpoints/scripted.json pointed at this test's endpoint, plus a policy the
    scripted model does not know (its refusal is what one test is about)."""
    config = json.loads((ROOT / "manifests" / "endpoints" / "scripted.json").read_text())
    config["scripted/wizard"] = config["scripted/oracle"]
    for entry in config.values():
        entry["env"] = {**entry["env"], "OPENAI_COMPAT_BASE_URL": model.base_url}
    return EndpointConfig.load(config)


async def _scripted_trial(trial, model: ScriptedModel, policy: str, task_name: str, **kwargs: Any):  # type: ignore[no-untyped-def]
    mark = model.mark()
    outcome = await trial(policy=policy, task_name=task_name, manifest=_condition(policy),
                          endpoints=_endpoints(model), **kwargs)
    return outcome, model.usage_since(mark)


def _failing(reward: dict[str, float]) -> set[str]:
    return {name for name, value in reward.items() if name not in ("reward", "refusal_free") and value != 1.0}


def _receipt(outcome):  # type: ignore[no-untyped-def]
    accounting = collect_accounting(outcome.directory, plan_seats(outcome.manifest), outcome.manifest.prices)
    assert accounting.reconciled, accounting.reconciliation_note
    (receipt,) = accounting.receipts
    return receipt


@pytest.mark.parametrize("task_name", NATIVE_TASKS)
async def test_scripted_oracle_scores_full_reward_billed_the_endpoints_counts(
        trial, scripted_model: ScriptedModel, task_name: str) -> None:
    outcome, served = await _scripted_trial(trial, scripted_model, "oracle", task_name)
    assert outcome.completion is not None and outcome.completion["content"].startswith("DONE:")
    assert outcome.reward["reward"] == 1.0, (outcome.reward, outcome.seats[0].log_text()[-3000:])
    receipt = _receipt(outcome)
    assert served and receipt.input_tokens == sum(u["prompt_tokens"] for u in served)
    assert receipt.output_tokens == sum(u["completion_tokens"] for u in served)
    assert receipt.cost_usd > 0
    seat = outcome.seats[0]
    log = seat.log_text()
    assert "policy=openai endpoint " in log and "tool_call: dev__shell (other)" in log
    assert "turn complete for " in log
    assert seat.exit_before_stop is None  # alive until stopped (idles like the real one) ...
    assert seat.process.returncode == 0  # ... and SIGTERM ends it promptly and cleanly
    assert outcome.api_key not in log and outcome.secrets.seats["solo-1"].secret_hex not in log


@pytest.mark.parametrize("task_name", NATIVE_TASKS)
async def test_scripted_toplevel_fails_only_reply_to_thread(trial, scripted_model: ScriptedModel,
                                                            task_name: str) -> None:
    outcome, _ = await _scripted_trial(trial, scripted_model, "toplevel", task_name)
    assert outcome.completion is not None
    if task_name == "reply-to-thread":
        assert _failing(outcome.reward) == {"reply_to_thread"} and outcome.reward["reward"] == 0.0, outcome.reward
    else:
        assert _failing(outcome.reward) == set() and outcome.reward["reward"] == 1.0, outcome.reward


async def test_scripted_silent_reads_and_says_nothing(trial, scripted_model: ScriptedModel) -> None:
    outcome, served = await _scripted_trial(trial, scripted_model, "silent", "reply-to-thread", done_budget_s=4)
    assert outcome.completion is None and outcome.reward["reward"] == 0.0
    assert all(m["pubkey"] != outcome.handle.orchestrator.pubkey for m in outcome.evidence["messages"])
    receipt = _receipt(outcome)
    assert len(served) == 1 and receipt.input_tokens == served[0]["prompt_tokens"] > 0


async def test_scripted_spender_bills_the_runaway_counts_it_was_told(trial, scripted_model: ScriptedModel) -> None:
    outcome, served = await _scripted_trial(trial, scripted_model, "spender", "user-mention")
    assert outcome.reward["reward"] == 1.0
    receipt = _receipt(outcome)
    assert receipt.input_tokens == sum(u["prompt_tokens"] for u in served) >= 50_000_000 * len(served)


async def test_an_endpoint_refusal_is_a_turn_failure_naming_its_message(trial, scripted_model: ScriptedModel) -> None:
    outcome, served = await _scripted_trial(trial, scripted_model, "wizard", "user-mention", done_budget_s=4)
    assert outcome.completion is None and served == []
    log = outcome.seats[0].log_text()
    assert (f"failed: {scripted_model.base_url}/chat/completions answered 400: model: 'scripted/wizard' "
            "names no scripted policy") in log
    assert "turn cancelled for " in log
