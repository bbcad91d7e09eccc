"""Harbor's own code (each release the tier covers, in a virtualenv of its own) reads a corpus of task directories —
legacy size strings, allow_internet, `[task].name`, phase network overrides, unset fields and
every directory under tasks/ — and the project's reading of each agrees with Harbor's figure for
figure on the fields the operator uses: the name, the timeouts and the agents' deadline, cpus,
memory and storage and the pod's requests, the network of each phase, the image, the verifier's
env and the instruction (docs/task-toml.md). Harbor's code decides every figure
(tests/support/harbor_task_reader.py); nothing here writes an expected value by hand, except the
operator's own defaults where Harbor requests nothing.

A directory Harbor refuses is refused by the project too. A directory Harbor accepts that the
operator cannot run faithfully (GPUs, Windows, a privileged compose service, multi-step, …) is refused by the project
with an error naming the field and saying the operator does not support it."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from buzz_operator.dataset import TaskError, load_task
from buzz_operator.dataset.config import (
    OPERATOR_DEFAULT_CPUS,
    OPERATOR_DEFAULT_MEMORY_MB,
    OPERATOR_DEFAULT_STORAGE_MB,
)
from buzz_operator.dataset.task import Task
from buzz_operator.pod.trial_pod import grading_network, task_resources
from buzz_operator.sweep.trialspec import trial_resources
from buzz_operator.trial.deadlines import step_deadlines

from tests.support.harbor_venv import harbor_python
from tests.unit.dataset.task_factory import make_task

REPO = Path(__file__).resolve().parents[2]
READER = REPO / "tests" / "support" / "harbor_task_reader.py"
# a condition's trial budget well above every task limit, and one below some of them
BUDGETS = (100_000, 45)

# name -> (task.toml, extra files, Dockerfile or None for a prebuilt image)
Entry = tuple[str, dict[str, str], str | None]
DOCKERFILE = "FROM python:3.12-slim-bookworm\n"


def entry(toml: str, extra: dict[str, str] | None = None, dockerfile: str | None = DOCKERFILE) -> Entry:
    return toml, extra or {}, dockerfile


# Both read these; the project's figures must be Harbor's.
HONOURED: dict[str, Entry] = {
    "unset": entry(""),
    "legacy-version": entry('version = "1.0"\n'),
    "legacy-sizes": entry('[environment]\nmemory = "4G"\nstorage = "10G"\ncpus = 2\n'),
    "legacy-fractions": entry('[environment]\nmemory = "1.5G"\nstorage = "2048K"\ncpus = 0.5\n'),
    "legacy-lowercase-megabytes": entry('[environment]\nmemory = " 768m "\nstorage = "3g"\n'),
    "legacy-agrees-with-mb": entry('[environment]\nmemory = "2G"\nmemory_mb = 2048\n'),
    "whole-float-cpus": entry("[environment]\ncpus = 2.0\nmemory_mb = 512\nstorage_mb = 4096\n"),
    "allow-internet-false": entry("[environment]\nallow_internet = false\n"),
    "allow-internet-true": entry("[environment]\nallow_internet = true\n"),
    "allow-internet-under-network-mode": entry('[environment]\nallow_internet = false\nnetwork_mode = "public"\n'),
    "allow-internet-under-allowed-hosts": entry(
        '[environment]\nallow_internet = true\nnetwork_mode = "allowlist"\nallowed_hosts = ["PyPI.org.", "10.1.0.0/16"]\n'
    ),
    "allow-internet-under-empty-hosts": entry("[environment]\nallow_internet = false\nallowed_hosts = []\n"),
    "verifier-override": entry(
        '[environment]\nnetwork_mode = "no-network"\n'
        '[verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = ["*.pythonhosted.org", "2001:DB8::1"]\n'
    ),
    "agent-override": entry('[agent]\nnetwork_mode = "no-network"\ntimeout_sec = 90\n'),
    "verifier-sealed-by-allow-internet": entry("[environment]\nallow_internet = false\n[verifier]\ntimeout_sec = 45.5\n"),
    "task-name": entry(
        '[task]\nname = "acme/log-parse"\nversion = "1.0"\ndescription = "Parse logs"\nkeywords = ["logs"]\n'
        '[[task.authors]]\nname = "Ada"\nemail = "ada@example.com"\n'
    ),
    "task-name-not-oci": entry('[task]\nname = "Acme.Labs/Log_Parse.V2"\n'),
    "timeouts": entry("[agent]\ntimeout_sec = 1234.5\n[verifier]\ntimeout_sec = 61\n[environment]\nbuild_timeout_sec = 900\n"),
    "verifier-env-literal": entry('[verifier]\nenv = { MODE = "strict", URL = "x${HOME}y" }\n'),
    "environment-env-literal": entry('[environment]\nenv = { MODE = "fast", URL = "x${HOME}y", EMPTY = "" }\n'),
    "workdir": entry('[environment]\nworkdir = "/app"\n'),
    "verifier-user": entry("[verifier]\nuser = 1000\n"),
    "agent-user": entry('[agent]\nuser = "agent"\n'),
    "verifier-user-name": entry('[verifier]\nuser = "tester"\n'),
    "artifacts": entry('artifacts = ["/app/out.txt", { source = "/app/run", destination = "run", exclude = ["*.tmp"] }]\n'),
    "healthcheck": entry('[environment.healthcheck]\ncommand = "test -f /ready"\nretries = 5\nstart_period_sec = 2\n'),
    "verifier-shared": entry('[verifier]\nenvironment_mode = "shared"\n'),
    "no-gpus": entry('[environment]\ngpus = 0\ngpu_types = ["H100"]\n'),
    "os-linux-any-case": entry('[environment]\nos = "LINUX"\n'),
    "prebuilt-image": entry('[environment]\ndocker_image = "python:3.12-slim-bookworm"\n', dockerfile=None),
    "metadata-and-source": entry('source = "terminal-bench"\n[metadata]\ndifficulty = "easy"\ntags = ["a"]\n'),
    "solution-env": entry('[solution]\nenv = { ANSWER = "42" }\n', {"solution/solve.sh": "echo 42\n"}),
    "single-step-strategy": entry('multi_step_reward_strategy = "final"\n'),
    "empty-lists": entry("artifacts = []\n[environment]\nmcp_servers = []\nenv = {}\n[verifier]\ncollect = []\n"),
    "unknown-keys": entry('future_root = 1\n[environment]\nfuture_knob = "x"\n'),
    "compose": entry("", {"environment/docker-compose.yaml":
                          "services:\n  main:\n    build: .\n  db:\n    image: postgres:16\n"}),
    "canary": entry("", {"instruction.md": "<!-- harbor-canary GUID 1234 -->\n# canary line\n\nDo the thing.\n"}),
}

# Harbor refuses these; so must the project.
REFUSED_BY_HARBOR: dict[str, Entry] = {
    "conflicting-memory": entry('[environment]\nmemory = "4G"\nmemory_mb = 100\n'),
    "conflicting-storage": entry('[environment]\nstorage = "1G"\nstorage_mb = 1000\n'),
    "size-without-unit": entry('[environment]\nmemory = "4096"\n'),
    "size-with-bytes": entry('[environment]\nmemory = "4GB"\n'),
    "size-not-a-number": entry('[environment]\nstorage = "lotsG"\n'),
    "name-without-org": entry('[task]\nname = "log-parse"\n'),
    "name-with-dots": entry('[task]\nname = "acme/../x"\n'),
    "hosts-without-allowlist": entry('[environment]\nallowed_hosts = ["pypi.org"]\n'),
    "host-is-a-url": entry('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["https://pypi.org/simple"]\n'),
    "phase-hosts-without-mode": entry('[verifier]\nallowed_hosts = ["pypi.org"]\n'),
    "unknown-network": entry('[environment]\nnetwork_mode = "bridge"\n'),
    "unknown-verifier-network": entry('[verifier]\nnetwork_mode = "offline"\n'),
    "cpus-infinite": entry("[environment]\ncpus = inf\n"),
    "unknown-os": entry('[environment]\nos = "plan9"\n'),
    "no-test-script": entry("", {"tests/run.sh": "true\n"}),
    "link-out-of-task": entry(""),
    "shared-with-environment": entry('[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ncpus = 1\n'),
    "unknown-strategy": entry('multi_step_reward_strategy = "best"\n'),
}

STEP = {"steps/one/instruction.md": "Step one.\n", "steps/one/tests/test.sh": "true\n"}
# Harbor accepts these; the operator cannot run them as Harbor would and refuses them, naming the
# field. Only the classification is written here; Harbor's acceptance is checked, not assumed.
REFUSED_BY_OPERATOR: dict[str, Entry] = {
    "gpus": entry("[environment]\ngpus = 1\n"),
    "tpu": entry('[environment.tpu]\ntype = "v6e"\ntopology = "2x2"\n'),
    "windows": entry('[environment]\nos = "windows"\n', {"tests/test.bat": "exit 0\n"}),
    "mcp-servers": entry('[[environment.mcp_servers]]\nname = "fs"\ntransport = "stdio"\ncommand = "mcp-fs"\n'),
    "environment-env": entry('[environment]\nenv = { TOKEN = "${HOST_TOKEN}" }\n'),
    "environment-env-default": entry('[environment]\nenv = { MODE = "${HOST_MODE:-fast}" }\n'),
    "skills-dir": entry('[environment]\nskills_dir = "/skills"\n'),
    "verifier-separate": entry('[verifier]\nenvironment_mode = "separate"\n'),
    "verifier-environment": entry("[verifier.environment]\ncpus = 1\n"),
    "verifier-collect": entry('[[verifier.collect]]\ncommand = "pg_dump > /tmp/db.sql"\n'),
    "verifier-env-template": entry('[verifier]\nenv = { API = "${API_KEY:-none}" }\n'),
    "multi-step": entry('[[steps]]\nname = "one"\n', STEP),
    "artifacts-from-a-service": entry('artifacts = [{ source = "/dump.sql", service = "db" }]\n'),
    "compose-privileged": entry("", {"environment/docker-compose.yaml":
                                     "services:\n  db:\n    image: postgres:16\n    privileged: true\n"}),
    "compose-bind-mount": entry("", {"environment/docker-compose.yaml":
                                     "services:\n  db:\n    image: postgres:16\n    volumes: [./data:/data]\n"}),
    # Harbor drops a size that is not a string without a word; the operator refuses it
    "memory-not-a-string": entry("[environment]\nmemory = 4096\n"),
}


def build(parent: Path, entries: dict[str, Entry]) -> dict[str, Path]:
    roots = {}
    for name, (toml, extra, dockerfile) in entries.items():
        overrides = {k: v for k, v in extra.items() if k == "instruction.md"}
        files = {k: v for k, v in extra.items() if k != "instruction.md"}
        root = make_task(parent, name, toml=toml, dockerfile=dockerfile, extra=files,
                         **({"instruction": overrides["instruction.md"]} if overrides else {}))  # type: ignore[arg-type]
        if name == "no-test-script":
            (root / "tests" / "test.sh").unlink()
        if name == "link-out-of-task":  # tests/ is copied into the container: a link out would carry host files
            (parent / "outside.txt").write_text("host file\n")
            (root / "tests" / "data.txt").symlink_to(parent / "outside.txt")
        roots[name] = root
    return roots


def harbor_read(directories: list[Path], release: str) -> dict[str, dict[str, Any]]:
    done = subprocess.run([harbor_python(release), str(READER), *map(str, directories)], capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, f"harbor_task_reader.py failed:\n{done.stderr[-3000:]}"
    return {Path(report["dir"]).name: report for report in json.loads(done.stdout)}


NO_OVERRIDES = SimpleNamespace(environment=SimpleNamespace(override_cpus=None, override_memory_mb=None,
                                                           override_storage_mb=None))  # fmt: skip


def _cpu(quantity: str) -> float:
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def _policy(policy: Any) -> list[Any]:
    return [policy.network_mode, list(policy.allowed_hosts)]


def assert_agrees(task: Task, harbor: dict[str, Any]) -> None:
    config, environment = task.config, task.config.environment
    where = task.path.name
    assert task.harbor_name == harbor["name"], where
    assert task.short_name == harbor["short_name"], where
    assert config.schema_version == harbor["schema_version"], where
    assert config.agent.timeout_sec == harbor["agent_timeout_sec"], where
    assert config.verifier.timeout_sec == harbor["verifier_timeout_sec"], where
    assert environment.build_timeout_sec == harbor["build_timeout_sec"], where
    assert (environment.cpus, environment.memory_mb, environment.storage_mb) == (
        harbor["cpus"], harbor["memory_mb"], harbor["storage_mb"]), where  # fmt: skip
    assert _policy(config.agent_network()) == harbor["agent_network"], where
    assert _policy(config.verifier_network()) == harbor["verifier_network"], where
    assert grading_network(config) == harbor["verifier_network"][0], where
    assert environment.docker_image == harbor["docker_image"], where
    assert environment.os == harbor["os"], where
    assert config.verifier.env == harbor["verifier_env"], where
    assert environment.env == harbor["environment_env"], where
    assert config.verifier.user == harbor["verifier_user"], where
    assert config.agent.user == harbor["agent_user"], where
    assert environment.workdir == harbor["workdir"], where
    ours = environment.healthcheck.model_dump() if environment.healthcheck else None
    assert ours == harbor["healthcheck"], where
    # Harbor keeps a bare string as it is; the operator reads it as the entry's source
    theirs = [{"source": a, "destination": None, "exclude": [], "service": None} if isinstance(a, str) else a
              for a in harbor["artifacts"]]
    assert [e.model_dump() for e in config.artifact_entries()] == theirs, where
    assert task.instruction == harbor["instruction"], where

    # The task container's requests: Harbor's GKE request where Harbor makes one, else the
    # operator's default (Harbor's GKE requests nothing there); limits equal requests.
    requests = task_resources(trial_resources(task, NO_OVERRIDES))["requests"]  # type: ignore[arg-type]
    gke = harbor["gke"]
    assert "refused" not in gke, (where, gke)
    cpu = _cpu(gke["cpu_request"]) if gke["cpu_request"] is not None else OPERATOR_DEFAULT_CPUS
    assert _cpu(requests["cpu"]) == cpu, where
    assert requests["memory"] == (gke["memory_request"] or f"{OPERATOR_DEFAULT_MEMORY_MB}Mi"), where
    assert requests["ephemeral-storage"] == (gke["ephemeral_storage_request"] or f"{OPERATOR_DEFAULT_STORAGE_MB}Mi"), where

    # The agents' deadline: Harbor's agent timeout (None: no task limit) within the condition's budget.
    for budget in BUDGETS:
        deadlines = step_deadlines(agent_timeout_sec=config.agent.timeout_sec,
                                   verifier_timeout_sec=config.verifier.timeout_sec,
                                   build_timeout_sec=environment.build_timeout_sec,
                                   manifest_timeout_seconds=budget, multiplier=1.0)  # fmt: skip
        limit = harbor["agent_timeout_sec"]
        expected = budget if limit is None else min(budget, math.ceil(limit))
        assert deadlines.agent_seconds == expected, (where, budget)
        assert deadlines.verifier_seconds == math.ceil(harbor["verifier_timeout_sec"]), where


@pytest.fixture(scope="module")
def corpus(harbor_release: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path, dict[str, Any]]]:
    parent = tmp_path_factory.mktemp("corpus")
    kinds: dict[str, tuple[str, Path]] = {}
    for kind, entries in (("honoured", HONOURED), ("harbor-refuses", REFUSED_BY_HARBOR),
                          ("operator-refuses", REFUSED_BY_OPERATOR)):  # fmt: skip
        for name, root in build(parent / kind, entries).items():
            kinds[name] = (kind, root)
    for root in sorted(p for p in (REPO / "tasks").iterdir() if (p / "task.toml").is_file()):
        kinds[f"tasks/{root.name}"] = ("honoured", root)
    reports = harbor_read([root for _, root in kinds.values()], harbor_release)
    # tasks/ folders and corpus folders share no name, so Harbor's reports map back one to one
    return {name: (kind, root, reports[root.name]) for name, (kind, root) in kinds.items()}


def test_the_corpus_covers_every_tasks_directory(corpus: dict[str, tuple[str, Path, dict[str, Any]]]) -> None:
    builtin = {name for name in corpus if name.startswith("tasks/")}
    assert builtin == {f"tasks/{p.name}" for p in (REPO / "tasks").iterdir() if (p / "task.toml").is_file()}
    assert len(builtin) >= 10


def test_the_project_reads_every_task_harbor_reads_as_harbor_does(
    corpus: dict[str, tuple[str, Path, dict[str, Any]]],
) -> None:
    checked = 0
    for name, (kind, root, report) in corpus.items():
        if kind != "honoured":
            continue
        assert "refused" not in report, f"Harbor refuses corpus task {name}: {report['refused']}"
        assert_agrees(load_task(root), report["figures"])
        checked += 1
    assert checked == len(HONOURED) + sum(1 for n in corpus if n.startswith("tasks/"))


def test_what_harbor_refuses_the_project_refuses(corpus: dict[str, tuple[str, Path, dict[str, Any]]]) -> None:
    for name, (kind, root, report) in corpus.items():
        if kind != "harbor-refuses":
            continue
        assert "refused" in report, f"Harbor reads {name}, which the corpus expects it to refuse"
        with pytest.raises(TaskError):
            load_task(root)


def test_what_the_operator_cannot_run_is_refused_naming_the_field(
    corpus: dict[str, tuple[str, Path, dict[str, Any]]],
) -> None:
    for name, (kind, root, report) in corpus.items():
        if kind != "operator-refuses":
            continue
        # Harbor accepts it: the refusal is the operator's own, and must say so
        assert "refused" not in report, f"Harbor refuses {name} itself: {report.get('refused')}"
        with pytest.raises(TaskError) as caught:
            load_task(root)
        message = str(caught.value)
        assert "not support" in message or name == "memory-not-a-string", (name, message)
        assert caught.value.field or "docker-compose" in caught.value.source, (name, message)


def test_the_trial_documents_name_the_task_as_harbor_does(harbor_release: str, tmp_path: Path) -> None:
    """result.json's task_name is Harbor's Task.name (`[task].name`), config.json's task path and
    result.json's task_id the folder, and Harbor's own models, viewer and resume read them
    (the operator's composition, as test_operator_documents.py runs it)."""
    from buzz_operator.api import validate_sweep_spec
    from buzz_operator.api.stack import stack_record
    from buzz_operator.ledger import collect_accounting
    from buzz_operator.storage import FileStore
    from buzz_operator.storage.layout import sweep_config_key
    from buzz_operator.sweep.lock import sweep_config, sweep_lock
    from buzz_operator.sweep.planner import plan_trials
    from buzz_operator.sweep.trialspec import build_trial_spec
    from buzz_operator.trial.steps import bundle as bundle_step

    from tests.harbor.test_operator_documents import DIGESTS, MANIFEST, SPEC, STACK, T0, _context, _status
    from tests.support.harbor_venv import harbor_check, problems

    root = make_task(tmp_path / "dataset", "log-parse", toml='[task]\nname = "acme/Log-Parse"\n')
    task, harbor = load_task(root), harbor_read([root], harbor_release)["log-parse"]["figures"]
    sweep, store = "named", FileStore(tmp_path / "store")
    lock = sweep_lock(manifest=MANIFEST, dataset="builtin", tasks=[task],
                      task_images={task.name: task.image_ref("r", "builtin")}, stack=STACK, stack_digests=DIGESTS,
                      operator_image="o")  # fmt: skip
    asyncio.run(store.put(sweep_config_key(sweep), json.dumps(sweep_config(sweep, "ns", SPEC, lock)).encode()))
    planned = plan_trials(sweep, "uid-1", MANIFEST.sha256, [task.name], 1)[0]
    trial_spec = build_trial_spec(planned, task=task, manifest=MANIFEST, condition_hash=MANIFEST.sha256,
                                  sweep=validate_sweep_spec(SPEC), dataset="builtin", default_stack=STACK,
                                  default_operator_image="o")  # fmt: skip
    ctx = _context(store, planned, trial_spec, task, 0)
    trial_dir = tmp_path / "store" / sweep / planned.name
    trial_dir.mkdir(parents=True)
    job = asyncio.run(bundle_step._job_config(ctx))  # type: ignore[arg-type]
    trial_config = bundle_step._config(ctx, job)  # type: ignore[arg-type]
    result = bundle_step._result(ctx, _status(1), collect_accounting(trial_dir, ctx.seats, MANIFEST.prices), {},  # type: ignore[arg-type]
                                    trial_config, T0, stack_record(STACK, DIGESTS))  # fmt: skip
    (trial_dir / "config.json").write_text(json.dumps(trial_config, indent=2, sort_keys=True))
    (trial_dir / "result.json").write_text(json.dumps(result, indent=4))
    [report] = harbor_check(("sweep", tmp_path / "store" / sweep), release=harbor_release)
    assert problems([report]) == [], json.dumps(report, indent=2)
    assert report["resume_kept"] == [planned.name]
    assert result["task_name"] == harbor["name"] == "acme/Log-Parse"
    assert trial_config["task"]["path"] == result["task_id"]["path"] == root.name
