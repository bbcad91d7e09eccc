"""task.toml read as Harbor 0.25.0 reads it (docs/task-toml.md): every field of Harbor's
TaskConfig with Harbor's meaning, and every field the operator cannot honour refused with an
error naming it. tests/harbor/test_task_toml.py checks the same readings against Harbor's code."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.dataset import TaskError, load_task
from buzz_operator.dataset.config import NetworkPolicy
from buzz_operator.dataset.task import Task

from tests.unit.dataset.task_factory import make_task


def load(tmp_path: Path, toml: str, **kwargs: object) -> Task:
    return load_task(make_task(tmp_path, toml=toml, **kwargs))  # type: ignore[arg-type]


def refused(tmp_path: Path, toml: str, **kwargs: object) -> TaskError:
    with pytest.raises(TaskError) as caught:
        load(tmp_path, toml, **kwargs)
    return caught.value


# --- schema version, [task], metadata, source -------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "version"),
    [("", "1.4"), ('schema_version = "1.3"\n', "1.3"), ('version = "1.0"\n', "1.0"),
     ('version = "1.0"\nschema_version = "1.2"\n', "1.2")],
    ids=["harbor-default", "written", "legacy-version", "schema-version-wins"],
)
def test_schema_version_and_the_legacy_version(tmp_path: Path, toml: str, version: str) -> None:
    assert load(tmp_path, toml).config.schema_version == version


def test_task_name_is_harbors_name_and_the_folder_stays_the_key(tmp_path: Path) -> None:
    toml = ('[task]\nname = "acme/log-parse"\nversion = "2"\ndescription = "Parse"\nkeywords = ["logs"]\n'
            '[[task.authors]]\nname = "Ada"\nemail = "ada@example.com"\n')  # fmt: skip
    task = load(tmp_path, toml)
    assert task.harbor_name == "acme/log-parse" and task.short_name == "log-parse"
    assert task.name == "demo-task"  # lock.json, trial names, config.json task.path
    package = task.config.task
    assert package is not None and package.org == "acme" and package.version == "2"
    assert package.authors[0].email == "ada@example.com" and package.keywords == ["logs"]


def test_without_task_table_the_folder_is_every_name(tmp_path: Path) -> None:
    task = load(tmp_path, "")
    assert task.name == task.harbor_name == task.short_name == "demo-task" and task.config.task is None


@pytest.mark.parametrize(
    ("toml", "field"),
    [
        ('[task]\nname = "log-parse"\n', "task.name"),
        ('[task]\nname = "acme/../x"\n', "task.name"),
        ('[task]\nname = ".acme/x"\n', "task.name"),
        ('[task]\nname = "a/b/c"\n', "task.name"),
        ('[task]\nname = "a/b"\nversion = ""\n', "task.version"),
        ('[task]\nname = "a/b"\n[[task.authors]]\nemail = "x@y"\n', "task.authors.0.name"),
        ("[task]\n", "task.name"),
    ],
)
def test_bad_task_table_is_refused_naming_the_field(tmp_path: Path, toml: str, field: str) -> None:
    assert refused(tmp_path, toml).field == field


def test_metadata_source_and_solution_are_read(tmp_path: Path) -> None:
    toml = 'source = "terminal-bench"\n[metadata]\ndifficulty = "easy"\n[solution]\nenv = { ANSWER = "42" }\n'
    config = load(tmp_path, toml).config
    assert config.source == "terminal-bench" and config.metadata == {"difficulty": "easy"}
    assert config.solution.env == {"ANSWER": "42"}  # Harbor's oracle's; the operator runs no solution/


# --- [environment] resources ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "memory_mb", "storage_mb"),
    [
        ('memory = "4G"\nstorage = "10G"', 4096, 10240),
        ('memory = "1.5G"\nstorage = "512M"', 1536, 512),
        ('memory = "2048K"\nstorage = "1023K"', 2, 0),  # storage_mb stays unset: below (see refusal)
        ('memory = " 768m "', 768, None),
        ('memory = "2g"\nmemory_mb = 2048', 2048, None),
        ('memory = "0.7M"', None, None),
    ],
    ids=["gigabytes", "fraction-and-megabytes", "kilobytes", "spaces-and-case", "agrees-with-mb", "truncated"],
)
def test_legacy_size_strings_read_as_harbor_parses_them(
    tmp_path: Path, toml: str, memory_mb: int | None, storage_mb: int | None
) -> None:
    if memory_mb is None or storage_mb == 0:
        # int() truncates toward zero as Harbor's does, and a size under 1 MB is no request
        assert "at least 1 MB" in str(refused(tmp_path, f"[environment]\n{toml}\n"))
        return
    environment = load(tmp_path, f"[environment]\n{toml}\n").config.environment
    assert (environment.memory_mb, environment.storage_mb) == (memory_mb, storage_mb)


@pytest.mark.parametrize(
    ("toml", "field", "words"),
    [
        ('memory = "4G"\nmemory_mb = 100', "environment.memory", "Conflicting 'memory' and 'memory_mb'"),
        ('storage = "1G"\nstorage_mb = 1000', "environment.storage", "Conflicting 'storage' and 'storage_mb'"),
        ('memory = "4096"', "environment.memory", "expected a number with G, M or K"),
        ('memory = "4GB"', "environment.memory", "expected a number with G, M or K"),
        ('memory = "4Gi"', "environment.memory", "expected a number with G, M or K"),
        ('storage = "lotsG"', "environment.storage", "is not a number"),
        ('storage = "infG"', "environment.storage", "not a finite number"),
        ("memory = 4096", "environment.memory", "must be a size string"),
        ("memory_mb = 0", "environment.memory_mb", "greater than 0"),
        ("memory_mb = 1.5", "environment.memory_mb", "valid integer"),
        ("storage_mb = -1", "environment.storage_mb", "greater than 0"),
    ],
)
def test_bad_sizes_are_refused_naming_the_field(tmp_path: Path, toml: str, field: str, words: str) -> None:
    error = refused(tmp_path, f"[environment]\n{toml}\n")
    assert error.field == field and words in str(error)


@pytest.mark.parametrize(
    ("toml", "cpus"), [("cpus = 2", 2), ("cpus = 2.0", 2), ("cpus = 0.5", 0.5), ("cpus = 1.25", 1.25)]
)
def test_cpus_int_or_float_normalised_as_harbor(tmp_path: Path, toml: str, cpus: float) -> None:
    value = load(tmp_path, f"[environment]\n{toml}\n").config.environment.cpus
    assert value == cpus and type(value) is type(cpus)


@pytest.mark.parametrize("toml", ["cpus = 0", "cpus = -1", 'cpus = "2"', "cpus = true", "cpus = inf", "cpus = nan"])
def test_bad_cpus_are_refused_naming_the_field(tmp_path: Path, toml: str) -> None:
    assert refused(tmp_path, f"[environment]\n{toml}\n").field == "environment.cpus"


def test_unset_resources_are_harbors_none_and_the_operators_defaults(tmp_path: Path) -> None:
    environment = load(tmp_path, "").config.environment
    assert (environment.cpus, environment.memory_mb, environment.storage_mb) == (None, None, None)
    assert environment.resources() == (1.0, 2048, 10240)
    written = load(tmp_path / "w", '[environment]\ncpus = 3\nmemory = "1G"\nstorage_mb = 500\n').config.environment
    assert written.resources() == (3.0, 1024, 500)


def test_build_timeout_and_prebuilt_image(tmp_path: Path) -> None:
    environment = load(tmp_path, '[environment]\nbuild_timeout_sec = 900\ndocker_image = "python:3.12"\n',
                       dockerfile=None).config.environment  # fmt: skip
    assert (environment.build_timeout_sec, environment.docker_image) == (900.0, "python:3.12")
    assert refused(tmp_path / "e", '[environment]\ndocker_image = ""\n').field == "environment.docker_image"
    assert refused(tmp_path / "b", "[environment]\nbuild_timeout_sec = 0\n").field == "environment.build_timeout_sec"


# --- [environment] network, allow_internet, phase overrides -----------------------------------


@pytest.mark.parametrize(
    ("toml", "environment", "agent", "verifier"),
    [
        ("", "public", "public", "public"),
        ("[environment]\nallow_internet = false", "no-network", "no-network", "no-network"),
        ("[environment]\nallow_internet = true", "public", "public", "public"),
        ('[environment]\nallow_internet = false\nnetwork_mode = "public"', "public", "public", "public"),
        ('[environment]\nallow_internet = false\nnetwork_mode = "allowlist"\nallowed_hosts = []',
         "allowlist", "allowlist", "allowlist"),
        ("[environment]\nallow_internet = false\nallowed_hosts = []", "public", "public", "public"),
        ('[environment]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "public"',
         "no-network", "no-network", "public"),
        ('[agent]\nnetwork_mode = "no-network"', "public", "no-network", "public"),
        ('[environment]\nallow_internet = false\n[agent]\nnetwork_mode = "public"', "no-network", "public",
         "no-network"),
    ],
    ids=["default", "allow-internet-false", "allow-internet-true", "network-mode-wins", "allowed-hosts-wins",
         "empty-allowed-hosts-win", "verifier-override", "agent-override", "agent-override-over-legacy"],
)  # fmt: skip
def test_network_of_each_phase_is_harbors(
    tmp_path: Path, toml: str, environment: str, agent: str, verifier: str
) -> None:
    config = load(tmp_path, toml + "\n").config
    assert config.environment.network_mode == environment
    assert config.agent_network().network_mode == agent
    assert config.verifier_network().network_mode == verifier


def test_allowed_hosts_are_normalised_as_harbor_does(tmp_path: Path) -> None:
    toml = ('[environment]\nnetwork_mode = "allowlist"\n'
            'allowed_hosts = [" PyPI.org. ", "*.PythonHosted.org", "10.1.0.0/16", "2001:DB8:0::1", "192.0.2.1"]\n'
            '[verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = ["Mirror.Local"]\n')  # fmt: skip
    config = load(tmp_path, toml).config
    hosts = ("pypi.org", "*.pythonhosted.org", "10.1.0.0/16", "2001:db8::1", "192.0.2.1")
    assert config.agent_network() == NetworkPolicy("allowlist", hosts)
    assert config.verifier_network() == NetworkPolicy("allowlist", ("mirror.local",))


@pytest.mark.parametrize(
    ("toml", "field"),
    [
        ('[environment]\nallowed_hosts = ["pypi.org"]', "environment.allowed_hosts"),
        ('[environment]\nnetwork_mode = "public"\nallowed_hosts = ["pypi.org"]', "environment.allowed_hosts"),
        ('[verifier]\nallowed_hosts = ["pypi.org"]', "verifier.allowed_hosts"),
        ('[verifier]\nallowed_hosts = []', "verifier.allowed_hosts"),
        ('[agent]\nnetwork_mode = "public"\nallowed_hosts = ["pypi.org"]', "agent.allowed_hosts"),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["https://pypi.org"]', "environment.allowed_hosts"),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org:443"]', "environment.allowed_hosts"),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["a.*.org"]', "environment.allowed_hosts"),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["*.10.0.0.1"]', "environment.allowed_hosts"),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["10.0.0.1/8"]', "environment.allowed_hosts"),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = [" "]', "environment.allowed_hosts"),
        ('[environment]\nnetwork_mode = "bridge"', "environment.network_mode"),
        ('[agent]\nnetwork_mode = "internet"', "agent.network_mode"),
        ('[environment]\nallow_internet = "yes"', "environment.allow_internet"),
    ],
)
def test_bad_networks_are_refused_naming_the_field(tmp_path: Path, toml: str, field: str) -> None:
    error = refused(tmp_path, toml + "\n")
    assert error.field == field
    if field.endswith(".allowed_hosts") and "allowlist" not in toml:
        assert "allowed_hosts is only valid when network_mode='allowlist'" in str(error)


def test_a_bad_network_mode_is_the_only_error_beside_its_hosts(tmp_path: Path) -> None:
    error = refused(tmp_path, '[environment]\nnetwork_mode = "bridge"\nallowed_hosts = ["pypi.org"]\n')
    assert error.field == "environment.network_mode"


# --- [agent], [verifier] -------------------------------------------------------------------------


def test_agent_timeout_unset_is_no_task_limit(tmp_path: Path) -> None:
    assert load(tmp_path, "").config.agent.timeout_sec is None
    assert load(tmp_path / "s", "[agent]\ntimeout_sec = 90\n").config.agent.timeout_sec == 90.0
    assert refused(tmp_path / "z", "[agent]\ntimeout_sec = 0\n").field == "agent.timeout_sec"


def test_verifier_timeout_and_literal_env(tmp_path: Path) -> None:
    # a value that is not wholly ${VAR} or ${VAR:-default} is literal to Harbor, and so here
    toml = '[verifier]\ntimeout_sec = 45.5\nenv = { MODE = "strict", URL = "x${HOME}y", EMPTY = "" }\n'
    verifier = load(tmp_path, toml).config.verifier
    assert verifier.timeout_sec == 45.5
    assert verifier.env == {"MODE": "strict", "URL": "x${HOME}y", "EMPTY": ""}
    assert load(tmp_path / "d", "").config.verifier.timeout_sec == 600.0


def test_task_env_and_workdir_are_honoured(tmp_path: Path) -> None:
    """Set on the task container, so every command sees them (docs/task-toml.md#environment-variables)."""
    toml = '[environment]\nworkdir = "/app"\nenv = { MODE = "fast", URL = "x${HOME}y" }\n'
    environment = load(tmp_path, toml).config.environment
    assert environment.env == {"MODE": "fast", "URL": "x${HOME}y"} and environment.workdir == "/app"
    error = refused(tmp_path / "rel", '[environment]\nworkdir = "app"\n')
    assert error.field == "environment.workdir" and "absolute path" in str(error)
    error = refused(tmp_path / "name", '[environment]\nenv = { "A-B" = "1" }\n')
    assert error.field == "environment.env" and "'A-B'" in str(error)


def test_healthcheck_is_read_with_harbors_defaults(tmp_path: Path) -> None:
    check = load(tmp_path, '[environment.healthcheck]\ncommand = "test -f /ready"\nretries = 5\n').config.environment.healthcheck
    assert check is not None and (check.command, check.retries) == ("test -f /ready", 5)
    assert (check.interval_sec, check.timeout_sec, check.start_period_sec, check.start_interval_sec) == (5.0, 30.0, 0.0, 5.0)
    assert refused(tmp_path / "none", "[environment.healthcheck]\nretries = 2\n").field == "environment.healthcheck.command"


def test_artifacts_bare_and_full(tmp_path: Path) -> None:
    toml = 'artifacts = ["/app/out.txt", { source = "/app/run", destination = "run", exclude = ["*.tmp"] }]\n'
    entries = load(tmp_path, toml).config.artifact_entries()
    assert [(e.source, e.destination, e.exclude) for e in entries] == [
        ("/app/out.txt", None, []), ("/app/run", "run", ["*.tmp"])]
    assert refused(tmp_path / "up", 'artifacts = ["/app/../etc"]\n').field == "artifacts.0.source"
    assert refused(tmp_path / "m", 'artifacts = [{ source = "/a", destination = "manifest.json" }]\n').field == \
        "artifacts.0.destination"


def test_agent_user_is_honoured(tmp_path: Path) -> None:
    assert load(tmp_path, '[agent]\nuser = "agent"\n').config.agent.user == "agent"
    assert refused(tmp_path / "bad", "[agent]\nuser = -1\n").field == "agent.user"


def test_verifier_user_is_honoured(tmp_path: Path) -> None:
    assert load(tmp_path, '[verifier]\nuser = "tester"\n').config.verifier.user == "tester"
    assert load(tmp_path / "uid", "[verifier]\nuser = 1000\n").config.verifier.user == 1000
    assert refused(tmp_path / "bad", '[verifier]\nuser = "a b; rm"\n').field == "verifier.user"


def test_verifier_shared_mode_is_what_runs(tmp_path: Path) -> None:
    assert load(tmp_path, '[verifier]\nenvironment_mode = "shared"\n').config.verifier.environment_mode == "shared"


# --- what the operator refuses ---------------------------------------------------------------

STEP_FILES = {"steps/one/instruction.md": "Step one.\n", "steps/one/tests/test.sh": "true\n"}


@pytest.mark.parametrize(
    ("toml", "field", "words"),
    [
        ("[environment]\ngpus = 2", "environment.gpus", "GPUs"),
        ('[environment.tpu]\ntype = "v6e"\ntopology = "2x2"', "environment.tpu", "TPUs"),
        ('[environment]\nos = "Windows"', "environment.os", "Windows containers"),
        ('[[environment.mcp_servers]]\nname = "fs"\ntransport = "stdio"\ncommand = "x"', "environment.mcp_servers",
         "MCP servers"),
        ('[environment]\nenv = { TOKEN = "${HOST_TOKEN}" }', "environment.env", "never passes its own environment"),
        ('[environment]\nenv = { T = "${HOST_T:-x}" }', "environment.env", "T = '${HOST_T:-x}'"),
        ('[environment]\nskills_dir = "/skills"', "environment.skills_dir", "skills directory"),
        ('[verifier]\nenvironment_mode = "separate"', "verifier.environment_mode", "separate verifier environment"),
        ("[verifier.environment]\ncpus = 1", "verifier.environment", "separate verifier environment"),
        ('[[verifier.collect]]\ncommand = "true"', "verifier.collect", "collect hooks"),
        ('[verifier]\nenv = { K = "${API_KEY}" }', "verifier.env", "host environment templates"),
        ('[verifier]\nenv = { K = "${API_KEY:-none}" }', "verifier.env", "host environment templates"),
        ('artifacts = [{ source = "/db", service = "db" }]', "artifacts.0.service", "compose service"),
        ('artifacts = ["out.txt"]', "artifacts.0.source", "relative artifact source"),
    ],
)  # fmt: skip
def test_what_the_operator_cannot_honour_is_refused_naming_the_field(
    tmp_path: Path, toml: str, field: str, words: str
) -> None:
    error = refused(tmp_path, toml + "\n")
    assert error.field == field
    assert "the operator does not support" in str(error) and words in str(error)


def test_multi_step_tasks_are_refused_naming_steps(tmp_path: Path) -> None:
    error = refused(tmp_path, '[[steps]]\nname = "one"\n', extra=STEP_FILES)
    assert error.field == "steps" and "does not support multi-step tasks" in str(error)
    # no steps is a single-step task; the reward strategy is then read and unused, as in Harbor
    config = load(tmp_path / "single", 'steps = []\nmulti_step_reward_strategy = "final"\n').config
    assert config.steps == [] and config.multi_step_reward_strategy == "final"
    assert refused(tmp_path / "bad", 'multi_step_reward_strategy = "best"\n').field == "multi_step_reward_strategy"


def test_a_compose_environment_is_read_with_the_task(tmp_path: Path) -> None:
    # the file's own checks: tests/unit/dataset/test_compose.py
    task = load(tmp_path, "", extra={"environment/docker-compose.yaml": "services:\n  db:\n    image: redis:7\n"})
    assert task.compose is not None and [s.name for s in task.compose.services] == ["db"]


def test_verifier_env_names_must_be_variable_names(tmp_path: Path) -> None:
    error = refused(tmp_path, '[verifier]\nenv = { "A-B" = "1", "9X" = "2" }\n')
    assert error.field == "verifier.env" and "'A-B'" in str(error) and "'9X'" in str(error)


def test_the_accepted_empty_forms_of_refused_fields(tmp_path: Path) -> None:
    toml = ('artifacts = []\n[environment]\ngpus = 0\ngpu_types = ["H100"]\nmcp_servers = []\nenv = {}\nos = "LINUX"\n'
            "[verifier]\ncollect = []\nenv = {}\n")  # fmt: skip
    environment = load(tmp_path, toml).config.environment
    assert (environment.gpus, environment.gpu_types, environment.os) == (0, ["H100"], "linux")


# --- the task directory ----------------------------------------------------------------------


def test_tests_sh_is_required(tmp_path: Path) -> None:
    root = make_task(tmp_path, extra={"tests/run.sh": "true\n"})
    (root / "tests" / "test.sh").unlink()
    with pytest.raises(TaskError, match=r"task has no tests/test\.sh"):
        load_task(root)


def test_leading_canary_lines_are_not_the_instruction(tmp_path: Path) -> None:
    text = "<!-- harbor-canary GUID 1234 -->\n# canary: do not train\n\nDo the thing.\n"
    assert load(tmp_path, "", instruction=text).instruction == "Do the thing.\n"
    with pytest.raises(TaskError, match="instruction is empty"):
        load(tmp_path / "only", "", instruction="# canary GUID\n\n")


@pytest.mark.parametrize("where", ["tests/secret", "solution/secret", "tests/deep/er"])
def test_links_out_of_the_task_are_refused(tmp_path: Path, where: str) -> None:
    # Harbor's validate_input_tree: tests/ is copied into the container, so a link out of the
    # task would carry the operator's files there
    outside = tmp_path / "outside.txt"
    outside.write_text("operator secret\n")
    root = make_task(tmp_path / "d", extra={"solution/solve.sh": "true\n"})
    link = root / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    with pytest.raises(TaskError, match="must stay within the task") as caught:
        load_task(root)
    assert caught.value.source == str(link)


def test_links_inside_the_task_are_fine_and_cycles_are_refused(tmp_path: Path) -> None:
    root = make_task(tmp_path, extra={"tests/data/a.txt": "a\n"})
    (root / "tests" / "same.txt").symlink_to(root / "tests" / "data" / "a.txt")
    assert load_task(root).tests_dir == root / "tests"
    (root / "tests" / "data" / "loop").symlink_to(root / "tests")
    with pytest.raises(TaskError, match="must not form cycles"):
        load_task(root)
