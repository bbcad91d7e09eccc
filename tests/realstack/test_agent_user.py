"""task.toml's `[agent] user` with Block's real agents (BUZZ_STACK_DIR; docs/task-toml.md#users):
every seat — buzz-acp, buzz-agent, buzz-dev-mcp and the shell it runs — starts through `su` as the
named user, so the command the scripted model has buzz-dev-mcp run says `nobody`. The twin task
without the field runs the same command as the image's user (root) and scores 0 under the same
check, so the test can tell the field did it."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

import pytest
from kopf.testing import KopfRunner

from tests.realstack.stack_fixtures import ScriptedModel
from tests.realstack.test_real_stack import _secrets, _sweep
from tests.support.cluster import settled_trials
from tests.support.hungry_tasks import command_tasks

pytestmark = pytest.mark.realstack
WHO_CHECK = ('reward=$(python3 -c \'import pathlib; print(int(pathlib.Path("/tmp/who.txt").read_text().strip() == '
             '"nobody"))\' 2>/dev/null || echo 0)\necho "$reward" > "$verifier_dir/reward.txt"\n')


def _tasks() -> dict[str, str]:
    data = command_tasks({"as-nobody": "id -un", "as-image-user": "id -un"})
    for name in ("as-nobody", "as-image-user"):
        data[f"{name}__instruction.md"] = data[f"{name}__instruction.md"].replace("/app/hello.txt", "/tmp/who.txt")
        test = data[f"{name}__tests__test.sh"]
        assert 'echo "$reward" > "$verifier_dir/reward.txt"\n' in test
        data[f"{name}__tests__test.sh"] = test.replace('echo "$reward" > "$verifier_dir/reward.txt"\n', WHO_CHECK)
    data["as-nobody__task.toml"] = data["as-nobody__task.toml"].replace("[agent]\n", '[agent]\nuser = "nobody"\n', 1)
    return data


def test_an_agent_user_runs_blocks_agents_as_that_user(  # type: ignore[no-untyped-def]
    namespace, crds, stack_image, cluster_relay, scripted_model: ScriptedModel, tmp_path: Path,
) -> None:
    api_key = f"scripted-{secrets.token_hex(16)}"
    _secrets(namespace, cluster_relay.owner.secret_hex, cluster_relay.target.pg_dsn, api_key)
    subprocess.run(["kubectl", "-n", namespace, "create", "configmap", "user-tasks",
                    *(f"--from-literal={k}={v}" for k, v in _tasks().items())], check=True, capture_output=True)
    store = tmp_path / "store"
    body = _sweep("real-users", "oracle", store, stack_image, scripted_model)
    body["spec"]["dataset"] = {"configMapRef": {"name": "user-tasks"}}
    body["spec"]["retry"] = {"maxRetries": 0}
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                       capture_output=True, text=True)
        trials = settled_trials(namespace, 2, 900)
    assert runner.exception is None, runner.output
    status = {t["spec"]["task"]: t.get("status") or {} for t in trials}
    assert (status["as-nobody"].get("phase"), status["as-nobody"].get("reward")) == ("Succeeded", 1), status
    assert (status["as-image-user"].get("phase"), status["as-image-user"].get("reward")) == ("Succeeded", 0), status
