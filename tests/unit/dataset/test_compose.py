"""environment/docker-compose.yaml read as Harbor runs it, checked for one pod (docs/task-toml.md#compose)."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.dataset import TaskError, load_task
from buzz_operator.dataset.compose import (
    DEFAULT_SERVICE_CPUS,
    DEFAULT_SERVICE_MEMORY_MB,
    ComposeError,
    Healthcheck,
    Mount,
    interpolate,
    megabytes,
    parse_compose,
    seconds,
)

from tests.unit.dataset.task_factory import make_task

# The shape of a Terminal-Bench task Harbor's mapper could not collapse to a Dockerfile: Harbor's
# `main` (its variables, its log mount) and the task's own services.
TERMINAL_BENCH = """
services:
  main:
    build:
      context: ${CONTEXT_DIR}
    image: ${MAIN_IMAGE_NAME}
    command: ["sh", "-c", "sleep infinity"]
    environment:
      - TEST_DIR=/tests
      - DB_URL=postgres://db:5432/${DB_NAME:-app}
    volumes:
      - ${HOST_AGENT_LOGS_PATH}:${ENV_AGENT_LOGS_PATH}
      - shared:/shared
    depends_on:
      db:
        condition: service_healthy
  api:
    build: ./api
    command: python -m http.server 8000
    depends_on: [db]
    volumes: [shared:/data:ro]
    ports: ["8000:8000"]
  db:
    image: postgres:15
    environment:
      POSTGRES_PASSWORD: bench
    healthcheck:
      test: ["CMD-SHELL", "pg_isready -U postgres"]
      interval: 2s
      timeout: 5s
      retries: 10
      start_period: 10s
    deploy:
      resources:
        limits: {cpus: "0.25", memory: 256M}
  debug:
    image: busybox
    profiles: [debug]
volumes:
  shared:
"""


def _environment(tmp_path: Path) -> Path:
    (tmp_path / "api").mkdir(parents=True, exist_ok=True)
    (tmp_path / "api" / "Dockerfile").write_text("FROM python:3.12-slim\n")
    return tmp_path


def parse(tmp_path: Path, text: str, **env: str):
    return parse_compose(text, task_env=env, environment_dir=_environment(tmp_path))


def refused(tmp_path: Path, text: str, **env: str) -> ComposeError:
    with pytest.raises(ComposeError) as caught:
        parse(tmp_path, text, **env)
    return caught.value


def test_a_terminal_bench_compose_file_becomes_services_in_start_order(tmp_path: Path) -> None:
    compose = parse(tmp_path, TERMINAL_BENCH, DB_NAME="bench")
    # db before api (api depends on it); debug has a profile, which compose never starts unasked
    assert [s.name for s in compose.services] == ["db", "api"]
    db, api = compose.services
    assert db.image == "postgres:15" and db.build is None and db.environment == {"POSTGRES_PASSWORD": "bench"}
    assert (db.cpus, db.memory_mb) == (0.25, 256)
    # 10 retries, and the 10 s start period forgiven at one try every 2 s
    assert db.healthcheck == Healthcheck(("/bin/sh", "-c", "pg_isready -U postgres"), 2, 5, 15)
    assert api.image is None and api.build is not None and api.build.context == "api"
    assert api.command == ("python", "-m", "http.server", "8000") and api.entrypoint is None
    assert (api.cpus, api.memory_mb) == (DEFAULT_SERVICE_CPUS, DEFAULT_SERVICE_MEMORY_MB)
    assert api.mounts == (Mount("shared", "/data", True),)
    # main: the task's variables (its own env resolved), the named volume; Harbor's log mount left
    assert compose.main_environment == {"TEST_DIR": "/tests", "DB_URL": "postgres://db:5432/bench"}
    assert compose.main_mounts == (Mount("shared", "/shared", False),)
    assert compose.volumes == ("shared",)


def test_variables_come_from_the_task_env_or_their_defaults(tmp_path: Path) -> None:
    assert interpolate("${A}-${B:-two}-$A-$${A}", {"A": "one"}, "x") == "one-two-one-${A}"
    assert interpolate("${A:+set}${B+set}", {"A": "1", "B": ""}, "x") == "setset"
    assert interpolate("${A:-fallback}", {"A": ""}, "x") == "fallback"
    with pytest.raises(ComposeError) as caught:
        interpolate("${HOME}/x", {}, "services.db.image")
    assert caught.value.field == "services.db.image" and "HOME" in str(caught.value)
    # Harbor's own variables only name main's image, which the sweep decides
    assert interpolate("${MAIN_IMAGE_NAME}", {}, "x", harbor=True) == ""
    error = refused(tmp_path, "services:\n  db:\n    image: ${MAIN_IMAGE_NAME}\n")
    assert error.field == "services.db.image"


@pytest.mark.parametrize(("value", "expected"), [("10s", 10), ("1m30s", 90), ("500ms", 0.5), (3, 3), ("1h", 3600)])
def test_durations(value: object, expected: float) -> None:
    assert seconds(value, "x") == expected


@pytest.mark.parametrize(("value", "expected"), [("512m", 512), ("1g", 1024), ("1GB", 1024), ("256M", 256),
                                                 (268435456, 256), ("100k", 1)])
def test_sizes(value: object, expected: int) -> None:
    assert megabytes(value, "x") == expected


def test_bad_durations_and_sizes_name_the_field() -> None:
    with pytest.raises(ComposeError, match="interval"):
        seconds("soon", "services.db.healthcheck.interval")
    with pytest.raises(ComposeError, match="memory"):
        megabytes("lots", "services.db.memory")


@pytest.mark.parametrize(("service", "field", "words"), [
    ("privileged: true", "services.db.privileged", "Pod Security"),
    ("network_mode: host", "services.db.network_mode", "network"),
    ("cap_add: [NET_ADMIN]", "services.db.cap_add", "capabilities"),
    ("devices: [/dev/fuse]", "services.db.devices", "devices"),
    ("env_file: db.env", "services.db.env_file", "environment"),
    ("volumes: [./data:/data]", "services.db.volumes[0]", "only named volumes"),
    ("volumes: [/var/run/docker.sock:/var/run/docker.sock]", "services.db.volumes[0]", "only named volumes"),
    ("user: postgres", "services.db.user", "numeric"),
    ("frobnicate: 1", "services.db.frobnicate", "knows"),
    ("environment: [HOME]", "services.db.environment.HOME", "no value"),
    ("deploy: {replicas: 2}", "services.db.deploy.replicas", "one container"),
    ("extra_hosts: ['gw:host-gateway']", "services.db.extra_hosts", "host-gateway"),
    ("depends_on: [cache]", "services.db.depends_on", "not a service"),
    ("healthcheck: {test: [CMD]}", "services.db.healthcheck.test", "CMD"),
])
def test_what_one_pod_cannot_run_is_refused_naming_the_key(tmp_path: Path, service: str, field: str,
                                                            words: str) -> None:
    error = refused(tmp_path, f"services:\n  db:\n    image: postgres:15\n    {service}\n")
    assert error.field == field and words in error.reason


@pytest.mark.parametrize(("text", "field"), [
    ("services:\n  Web_1:\n    image: nginx\n", "services.Web_1"),
    ("services:\n  task:\n    image: nginx\n", "services.task"),
    ("services:\n  web: {}\n", "services.web"),
    ("services:\n  web:\n    build: ../outside\n", "services.web.build.context"),
    ("services:\n  web:\n    build: {context: ./api, dockerfile: Missing}\n", "services.web.build.dockerfile"),
    ("services:\n  main:\n    image: ubuntu:24.04\n", "services.main.image"),
    ("services:\n  main:\n    build: ./api\n", "services.main.build"),
    ("services:\n  main:\n    build: {context: ., dockerfile: Other}\n", "services.main.build"),
    ("services:\n  main:\n    command: python app.py\n", "services.main.command"),
    ("services:\n  main:\n    healthcheck: {test: 'true'}\n", "services.main.healthcheck"),
    ("services:\n  main:\n    cpus: 4\n", "services.main.cpus"),
    ("networks:\n  back: {}\n", "networks"),
    ("volumes:\n  data: {driver: nfs}\n", "volumes.data"),
    ("services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: y\n    depends_on: [a]\n",
     "services.a.depends_on"),
])
def test_services_and_main_are_checked(tmp_path: Path, text: str, field: str) -> None:
    assert refused(tmp_path, text).field == field


def test_depends_on_main_and_docker_only_keys_are_read_and_left(tmp_path: Path) -> None:
    compose = parse(tmp_path, "services:\n  web:\n    image: nginx\n    depends_on: [main]\n    restart: always\n"
                              "    container_name: web-1\n    hostname: www\n    expose: ['80']\n"
                              "    extra_hosts: ['mirror:10.0.0.9']\n    x-note: kept\n")
    [web] = compose.services
    assert web.aliases == ("www", "web-1") and compose.extra_hosts == {"mirror": "10.0.0.9"}


def test_a_task_with_compose_loads_and_lists_its_images(tmp_path: Path) -> None:
    root = make_task(tmp_path, extra={"environment/docker-compose.yaml": TERMINAL_BENCH,
                                      "environment/api/Dockerfile": "FROM python:3.12-slim\n"},
                     toml='schema_version = "1.3"\n[environment]\nenv = { DB_NAME = "bench" }\n')
    task = load_task(root)
    assert task.compose is not None
    images = task.images("registry.local/tasks", "demo")
    assert images[0] == task.image_ref("registry.local/tasks", "demo") and images[1] == "postgres:15"
    # a built service: the operator's name, tagged by its context's digest, like a task's own image
    assert images[2].startswith("registry.local/tasks/demo-demo-task-api:")


def test_a_compose_error_names_the_file_and_the_key(tmp_path: Path) -> None:
    root = make_task(tmp_path, extra={"environment/docker-compose.yaml": "services:\n  db:\n    image: x\n"
                                                                          "    privileged: true\n"})
    with pytest.raises(TaskError) as caught:
        load_task(root)
    assert caught.value.source.endswith("environment/docker-compose.yaml")
    assert caught.value.field == "services.db.privileged"


def test_the_yml_spelling_harbor_skips_is_refused(tmp_path: Path) -> None:
    root = make_task(tmp_path, extra={"environment/docker-compose.yml": "services: {}\n"})
    with pytest.raises(TaskError) as caught:
        load_task(root)
    assert caught.value.source.endswith("docker-compose.yml") and "rename it" in str(caught.value)


def test_mains_own_build_is_the_task_image(tmp_path: Path) -> None:
    # Harbor's own file builds main from environment/ (${CONTEXT_DIR}); a task file that says the same is read
    for build in (".", "./", "{context: .}", "{context: '${CONTEXT_DIR}', dockerfile: Dockerfile}"):
        compose = parse(tmp_path, f"services:\n  main:\n    build: {build}\n  db:\n    image: redis:7\n")
        assert [s.name for s in compose.services] == ["db"], build


def test_more_services_than_a_trial_pod_runs_are_refused_as_the_task_loads(tmp_path: Path) -> None:
    from buzz_operator.api.compose import MAX_SERVICES

    def many(count: int) -> str:
        return "services:\n" + "".join(f"  s{i}:\n    image: busybox:1.36\n" for i in range(count))

    assert len(parse(tmp_path, many(MAX_SERVICES)).services) == MAX_SERVICES
    error = refused(tmp_path, many(MAX_SERVICES + 1))
    assert "services" in str(error) and f"at most {MAX_SERVICES}" in str(error)
