"""A compose task's services in its trial pod: native sidecars before `task`, healthchecks as
startup probes, named volumes shared, every name resolving to the pod (docs/task-toml.md#compose)."""

from __future__ import annotations

from pathlib import Path

from buzz_operator.api import validate_trial_spec
from buzz_operator.dataset.task import load_task
from buzz_operator.pod.trial_pod import build_grading_pod, build_trial_pod
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.trialspec import build_trial_spec

from tests.unit.dataset.task_factory import make_task
from tests.unit.dataset.test_compose import TERMINAL_BENCH
from tests.unit.sweep.test_trialspec import DEFAULT_STACK, HASH, MANIFEST, SWEEP


def _spec(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_task(tmp_path, extra={"environment/docker-compose.yaml": TERMINAL_BENCH,
                                      "environment/api/Dockerfile": "FROM python:3.12-slim\n"},
                     toml='schema_version = "1.3"\n[environment]\nenv = { DB_NAME = "bench", TEST_DIR = "/t" }\n')
    task = load_task(root)
    planned = plan_trials("demo", "uid-1", HASH, [task.name], 1)[0]
    spec = build_trial_spec(planned, task=task, manifest=MANIFEST, condition_hash=HASH, sweep=SWEEP,
                            dataset="demo", default_stack=DEFAULT_STACK, default_operator_image="op:dev")
    return task, spec


def _pod(spec):  # type: ignore[no-untyped-def]
    return build_trial_pod(trial_name="demo-1", trial_uid="u", namespace="bench", retry=0, spec=spec,
                           trial_labels={}, relay_listen="127.0.0.1:3600", relay_target="10.96.0.1:3600")


def test_the_spec_carries_the_services_and_round_trips_the_api(tmp_path: Path) -> None:
    task, spec = _spec(tmp_path)
    assert spec.compose is not None and [s.name for s in spec.compose.services] == ["db", "api"]
    assert spec.compose.services[1].image == task.images(SWEEP.task_image_registry, "demo")[2]
    # compose's main environment under task.toml's own (TEST_DIR is task.toml's)
    assert spec.task_env == {"TEST_DIR": "/t", "DB_URL": "postgres://db:5432/bench", "DB_NAME": "bench"}
    assert spec.compose.host_aliases == {"main": "127.0.0.1", "db": "127.0.0.1", "api": "127.0.0.1"}
    assert validate_trial_spec(spec.to_api()) == spec


def test_services_are_sidecars_after_the_forwarder_and_before_the_task(tmp_path: Path) -> None:
    _, spec = _spec(tmp_path)
    pod = _pod(spec)["spec"]
    assert [c["name"] for c in pod["initContainers"]] == ["stack", "forwarder", "db", "api"]
    db, api = pod["initContainers"][2:]
    assert db["restartPolicy"] == api["restartPolicy"] == "Always"
    assert db["image"] == "postgres:15" and "command" not in db and "args" not in db
    assert db["env"] == [{"name": "POSTGRES_PASSWORD", "value": "bench"}]
    assert db["resources"] == {"requests": {"cpu": "250m", "memory": "256Mi"},
                               "limits": {"cpu": "250m", "memory": "256Mi"}}
    assert db["startupProbe"] == {"exec": {"command": ["/bin/sh", "-c", "pg_isready -U postgres"]},
                                  "periodSeconds": 2, "timeoutSeconds": 5, "failureThreshold": 15}
    assert db["securityContext"]["privileged"] is False and db["securityContext"]["allowPrivilegeEscalation"] is False
    # compose `command` is the container's args: the image's entrypoint runs them, as under Docker
    assert api["args"] == ["python", "-m", "http.server", "8000"] and "startupProbe" not in api
    assert api["volumeMounts"] == [{"name": "compose-0", "mountPath": "/data", "readOnly": True}]
    [task] = pod["containers"]
    assert {"name": "compose-0", "mountPath": "/shared"} in task["volumeMounts"]
    assert {"name": "compose-0", "emptyDir": {}} in pod["volumes"]
    assert pod["hostAliases"] == [{"ip": "127.0.0.1", "hostnames": ["main", "db", "api"]}]


def test_the_grading_pod_starts_the_services_afresh(tmp_path: Path) -> None:
    _, spec = _spec(tmp_path)
    pod = build_grading_pod(trial_name="demo-1", trial_uid="u", namespace="bench", generation=1, spec=spec,
                            trial_labels={})["spec"]
    assert [c["name"] for c in pod["initContainers"]] == ["db", "api"] and pod["hostAliases"]


def test_a_task_without_compose_has_the_pod_it_always_had(tmp_path: Path) -> None:
    from tests.unit.sweep.test_trialspec import _spec as plain

    _, spec = plain()
    pod = _pod(spec)["spec"]
    assert spec.compose is None and "hostAliases" not in pod
    assert [c["name"] for c in pod["initContainers"]] == ["stack", "forwarder"]
