"""task.toml's `[environment] env`, `workdir`, `[environment.healthcheck]`, `artifacts` and
`[agent]`/`[verifier] user` on the real kubelet (docs/task-toml.md): the healthcheck passes (reading the
variable) before the agents start, the agents' shell command reads the variable, and the verifier
runs as the named user in the working directory with the variable set. A twin task without them
runs the same command and test and scores 0, so the test can tell the fields did it. The
artifacts are in the bundle, laid out as Harbor lays them out. A task whose healthcheck never
passes fails as infra before its agents start (HealthcheckFailed); a task naming an agent user has
its agents' command run as that user."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from kopf.testing import KopfRunner

from tests.support.cluster import settled_trials
from tests.support.hungry_tasks import command_tasks

COMMAND = 'printf "$GREETING"'
# the verifier's own check: run from the working directory, with the variable set
CHECK = ('echo "user=$(id -un)"\nif [ "$(pwd)" != /srv/task ] || [ "${GREETING:-}" != "Hello, world!" ]; then reward=0; '
         'echo "pwd=$(pwd) GREETING=${GREETING:-unset}"; fi\necho "$reward" > "$verifier_dir/reward.txt"\n')


# the agents run as nobody: the command says who ran it, where nobody may write
AS_NOBODY = "id -un"
WHO_CHECK = ('reward=$(python3 -c \'import pathlib; print(int(pathlib.Path("/tmp/who.txt").read_text().strip() == '
             '"nobody"))\' 2>/dev/null || echo 0)\necho "$reward" > "$verifier_dir/reward.txt"\n')


def _tasks() -> dict[str, str]:
    data = command_tasks({"with-env": COMMAND, "without-env": COMMAND, "unhealthy": COMMAND, "as-nobody": AS_NOBODY})
    data["as-nobody__instruction.md"] = data["as-nobody__instruction.md"].replace("/app/hello.txt", "/tmp/who.txt")
    data["as-nobody__task.toml"] = data["as-nobody__task.toml"].replace("[agent]\n", '[agent]\nuser = "nobody"\n', 1)
    data["as-nobody__tests__test.sh"] = data["as-nobody__tests__test.sh"].replace(
        'echo "$reward" > "$verifier_dir/reward.txt"\n', WHO_CHECK)
    for name in ("with-env", "without-env", "unhealthy"):
        test = data[f"{name}__tests__test.sh"]
        assert 'echo "$reward" > "$verifier_dir/reward.txt"\n' in test
        data[f"{name}__tests__test.sh"] = test.replace('echo "$reward" > "$verifier_dir/reward.txt"\n', CHECK)
    toml = data["with-env__task.toml"]
    # artifacts are root keys: they go before the first table
    data["with-env__task.toml"] = 'artifacts = ["/app/hello.txt", { source = "/srv/task", destination = "work" }]\n' + toml.replace(
        "[environment]\n", '[environment]\nworkdir = "/srv/task"\nenv = { GREETING = "Hello, world!" }\n', 1
    ).replace("[verifier]\n", '[verifier]\nuser = "nobody"\n', 1) + \
        '[environment.healthcheck]\ncommand = \'test "$GREETING" = "Hello, world!"\'\n'
    data["unhealthy__task.toml"] = toml + '[environment.healthcheck]\ncommand = "false"\nretries = 2\ninterval_sec = 1\n'
    return data


def test_task_env_and_workdir_reach_the_agents_and_the_verifier(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    subprocess.run(["kubectl", "-n", namespace, "create", "configmap", "env-tasks",
                    *(f"--from-literal={k}={v}" for k, v in _tasks().items())], check=True, capture_output=True)
    body = make_sweep("envs", store_url=f"file://{store}", tasks=["with-env", "without-env", "unhealthy", "as-nobody"],
                      retry={"maxRetries": 0})
    body["spec"]["dataset"] = {"configMapRef": {"name": "env-tasks"}}
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                       capture_output=True, text=True)
        trials = settled_trials(namespace, 4, 600)
        subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", "envs", "--wait=false"], capture_output=True)
    assert runner.exception is None, runner.output
    status = {t["spec"]["task"]: t.get("status") or {} for t in trials}
    spec = {t["spec"]["task"]: t["spec"] for t in trials}
    assert spec["with-env"]["taskEnv"] == {"GREETING": "Hello, world!"} and spec["with-env"]["workingDir"] == "/srv/task"
    assert "taskEnv" not in spec["without-env"]
    assert (status["with-env"].get("phase"), status["with-env"].get("reward")) == ("Succeeded", 1), status
    assert (status["without-env"].get("phase"), status["without-env"].get("reward")) == ("Succeeded", 0), status
    # the task's artifacts, where Harbor puts them, with its manifest
    chosen = next(t["metadata"]["name"] for t in trials if t["spec"]["task"] == "with-env")
    collected = store / "envs" / chosen / "artifacts"
    assert (collected / "app" / "hello.txt").read_text().strip() == "Hello, world!"
    manifest = json.loads((collected / "manifest.json").read_text())
    assert [(e["destination"], e["type"], e["status"]) for e in manifest] == [
        ("app/hello.txt", "file", "ok"), ("work", "directory", "empty")], manifest
    # [agent] user: the agents' command ran as nobody
    assert (status["as-nobody"].get("phase"), status["as-nobody"].get("reward")) == ("Succeeded", 1), status
    sick = status["unhealthy"]
    assert (sick.get("phase"), sick.get("reason"), sick.get("failureClass")) == ("Failed", "HealthcheckFailed", "infra"), sick
    assert "2 consecutive times" in sick.get("message", "") and not sick.get("taskEventId"), sick
    twin = next(t["metadata"]["name"] for t in trials if t["spec"]["task"] == "without-env")
    said = (store / "envs" / twin / "verifier" / "test-stdout.txt").read_text()
    assert "GREETING=unset" in said and "pwd=/srv/task" not in said and "user=nobody" not in said, said
    # [verifier] user: the verifier ran as nobody, where its variables and directory still held
    assert "user=nobody" in (store / "envs" / chosen / "verifier" / "test-stdout.txt").read_text()
