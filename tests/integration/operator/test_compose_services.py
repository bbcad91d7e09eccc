"""environment/docker-compose.yaml on the real kubelet (docs/task-toml.md#compose): a service
named `web` runs beside the task container, healthy before the agents start, and the agents'
command reaches it by its name; a named volume is shared between it and the task container. A
twin task without the compose file runs the same command and test and scores 0, so the test can
tell the service did it. A service whose healthcheck never passes ends its trial ServiceFailed
(infra) before the agents start."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from kopf.testing import KopfRunner

from tests.support.cluster import settled_trials
from tests.support.hungry_tasks import command_tasks, hello_image

# the agents' command fetches the greeting from the service, by its name
COMMAND = ("python3 -c \"import urllib.request; print(urllib.request.urlopen('http://web:8080/greeting.txt')"
           ".read().decode(), end='')\"")
# the verifier also requires the file the service wrote in the named volume both containers mount
SHARED_CHECK = ('[ -f /site/greeting.txt ] || { echo "no /site/greeting.txt"; reward=0; }\n'
                'echo "$reward" > "$verifier_dir/reward.txt"\n')
PROBE = "import urllib.request; urllib.request.urlopen('http://localhost:8080/greeting.txt')"


def _compose(image: str, *, healthy: bool = True) -> str:
    test = ["CMD", "python3", "-c", PROBE] if healthy else ["CMD", "false"]
    return json.dumps({
        "services": {
            "main": {"volumes": ["site:/site"], "depends_on": {"web": {"condition": "service_healthy"}}},
            "web": {
                "image": image,
                "entrypoint": ["sh", "-c"],
                "command": ['printf "$$GREETING" > /srv/greeting.txt && exec python3 -m http.server 8080 --directory /srv'],
                "environment": {"GREETING": "Hello, world!"},
                "volumes": ["site:/srv"],
                "healthcheck": {"test": test, "interval": "1s", "timeout": "2s", "retries": 3},
                "deploy": {"resources": {"limits": {"cpus": "0.1", "memory": "64M"}}},
            },
        },
        "volumes": {"site": None},
    })


def _tasks() -> dict[str, str]:
    data = command_tasks({"with-web": COMMAND, "without-web": COMMAND, "sick-web": COMMAND})
    image = hello_image()
    data["with-web__environment__docker-compose.yaml"] = _compose(image)
    data["sick-web__environment__docker-compose.yaml"] = _compose(image, healthy=False)
    test = data["with-web__tests__test.sh"]
    assert 'echo "$reward" > "$verifier_dir/reward.txt"\n' in test
    data["with-web__tests__test.sh"] = test.replace('echo "$reward" > "$verifier_dir/reward.txt"\n', SHARED_CHECK)
    return data


def test_compose_services_run_beside_the_task_and_resolve_by_name(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    subprocess.run(["kubectl", "-n", namespace, "create", "configmap", "compose-tasks",
                    *(f"--from-literal={k}={v}" for k, v in _tasks().items())], check=True, capture_output=True)
    body = make_sweep("compose", store_url=f"file://{store}", tasks=["with-web", "without-web", "sick-web"],
                      retry={"maxRetries": 0})
    body["spec"]["dataset"] = {"configMapRef": {"name": "compose-tasks"}}
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(body), check=True,
                       capture_output=True, text=True)
        trials = settled_trials(namespace, 3, 600)
        subprocess.run(["kubectl", "-n", namespace, "delete", "buzzsweep", "compose", "--wait=false"],
                       capture_output=True)
    assert runner.exception is None, runner.output
    status = {t["spec"]["task"]: t.get("status") or {} for t in trials}
    spec = {t["spec"]["task"]: t["spec"] for t in trials}
    [web] = spec["with-web"]["compose"]["services"]
    assert web["name"] == "web" and web["probe"]["command"][0] == "python3", web
    assert spec["with-web"]["compose"]["hostAliases"] == {"main": "127.0.0.1", "web": "127.0.0.1"}
    assert "compose" not in spec["without-web"]
    assert (status["with-web"].get("phase"), status["with-web"].get("reward")) == ("Succeeded", 1), status
    # the twin: no service named web, the same command fails, the same test scores 0
    assert (status["without-web"].get("phase"), status["without-web"].get("reward")) == ("Succeeded", 0), status
    # how long the pod took to run every container, the service's healthcheck included (a figure, not asserted)
    print("pod start (s): with a healthchecked service", (status["with-web"].get("podStart") or {}).get("seconds"),
          "| without", (status["without-web"].get("podStart") or {}).get("seconds"))
    sick = status["sick-web"]
    assert (sick.get("phase"), sick.get("reason"), sick.get("failureClass")) == ("Failed", "ServiceFailed", "infra"), sick
    assert "compose service web" in sick.get("message", "") and not sick.get("taskEventId"), sick
