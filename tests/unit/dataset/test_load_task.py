"""load_task: defaults, the [buzz] table, and errors that name the file and field or line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from buzz_operator.dataset import TaskError, load_task

from tests.unit.dataset.task_factory import make_task


def test_harbor_defaults_apply_where_unspecified(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path))
    config = task.config
    # Harbor 0.25.0: no agent limit, verifier and build 600 s, resources unset, public network
    assert config.agent.timeout_sec is None
    assert config.verifier.timeout_sec == 600.0
    env = config.environment
    assert (env.build_timeout_sec, env.cpus, env.memory_mb, env.storage_mb) == (600.0, None, None, None)
    # ... and what the operator gives a container where task.toml is silent
    assert env.resources() == (1.0, 2048, 10240)
    assert env.network_mode == "public"
    assert env.docker_image is None
    assert config.metadata == {}
    assert not task.buzz.native and task.buzz.directory == []
    assert task.solution_dir is None
    assert task.instruction == "Do the thing.\n"
    assert task.name == task.harbor_name == task.short_name == "demo-task"
    assert task.tests_dir == tmp_path / "demo-task" / "tests"


def test_unknown_harbor_keys_are_kept(tmp_path: Path) -> None:
    toml = 'version = "1.0"\n[environment]\ngpus = 0\nfuture_knob = "x"\n[agent]\ntimeout_sec = 120\n'
    task = load_task(make_task(tmp_path, toml=toml))
    assert task.config.agent.timeout_sec == 120.0
    assert task.config.environment.gpus == 0
    assert task.config.environment.model_extra == {"future_knob": "x"}


def test_solution_dir_is_found(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path, extra={"solution/solve.sh": "echo hi\n"}))
    assert task.solution_dir == tmp_path / "demo-task" / "solution"


@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [({"instruction": None}, "instruction.md"), ({"toml": None}, "task.toml"), ({"tests": False}, "tests")],
)
def test_missing_part_is_named(tmp_path: Path, kwargs: dict[str, object], missing: str) -> None:
    root = make_task(tmp_path, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TaskError) as caught:
        load_task(root)
    assert caught.value.source == str(root / missing)
    assert missing in str(caught.value)


def test_missing_task_directory(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="does not exist"):
        load_task(tmp_path / "nope")


def test_empty_instruction_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"instruction\.md: instruction is empty"):
        load_task(make_task(tmp_path, instruction=" \n"))


def test_malformed_toml_names_file_and_line(tmp_path: Path) -> None:
    root = make_task(tmp_path, toml='schema_version = "1.3"\n\n[agent]\ntimeout_sec = = 3\n')
    with pytest.raises(TaskError) as caught:
        load_task(root)
    message = str(caught.value)
    assert message.startswith(str(root / "task.toml"))
    assert "line 4" in message


@pytest.mark.parametrize(
    ("toml", "field"),
    [
        ('[environment]\ncpus = "two"\n', "environment.cpus"),
        ("[environment]\nmemory_mb = 1.5\n", "environment.memory_mb"),
        ('[agent]\ntimeout_sec = "300"\n', "agent.timeout_sec"),
        ("[verifier]\ntimeout_sec = -1.0\n", "verifier.timeout_sec"),
        ('[environment]\nnetwork_mode = "bridge"\n', "environment.network_mode"),
        ("metadata = 3\n", "metadata"),
        ("[buzz]\nnative = true\nrequires_evidense = true\n", "buzz.requires_evidense"),
        ('[buzz]\nnative = "yes"\n', "buzz.native"),
        (
            '[buzz]\nnative = true\n[[buzz.directory]]\nprefix = "u-"\ncount = 2\nrole = "user"\ncolour = 1\n',
            "buzz.directory.0.colour",
        ),
        (
            '[buzz]\nnative = true\n[[buzz.directory]]\nprefix = "u-"\ncount = 0\nrole = "user"\n',
            "buzz.directory.0.count",
        ),
        (
            '[buzz]\nnative = true\n[[buzz.directory]]\nname = "Ada"\nrole = "user"\nabuot = "x"\n',
            "buzz.directory.0.abuot",
        ),
        (
            '[buzz]\nnative = true\n[[buzz.scripted_messages]]\nlabel = "a"\nactor = "user"\ncontent = ""\n',
            "buzz.scripted_messages.0.content",
        ),
    ],
)
def test_bad_field_is_named(tmp_path: Path, toml: str, field: str) -> None:
    root = make_task(tmp_path, toml=toml)
    with pytest.raises(TaskError) as caught:
        load_task(root)
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{root / 'task.toml'}: {field}: ")


def test_buzz_features_require_native(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="requires_evidence is set but native is false"):
        load_task(make_task(tmp_path, toml="[buzz]\nrequires_evidence = true\n"))


def test_directory_names_must_be_unique(tmp_path: Path) -> None:
    block = '[[buzz.directory]]\nprefix = "u-"\ncount = 3\nrole = "user"\n'
    with pytest.raises(TaskError, match="'u-1' is produced twice"):
        load_task(make_task(tmp_path, toml="[buzz]\nnative = true\n" + block + block))


def test_directory_expands_in_declared_order_with_padding(tmp_path: Path) -> None:
    toml = (
        "[buzz]\nnative = true\n"
        '[[buzz.directory]]\nprefix = "bot-"\ncount = 2\nwidth = 3\nrole = "bot"\n'
        '[[buzz.directory]]\nprefix = "user-"\ncount = 11\nrole = "user"\n'
    )
    names = [(entry.name, entry.role) for entry in load_task(make_task(tmp_path, toml=toml)).buzz.directory]
    assert names[:3] == [("bot-001", "bot"), ("bot-002", "bot"), ("user-1", "user")]
    assert names[-1] == ("user-11", "user") and len(names) == 13


def test_named_identities_may_share_a_display_name_not_an_identity_id(tmp_path: Path) -> None:
    twin = '[[buzz.directory]]\nname = "Taylor"\nrole = "user"\nidentity_id = "{id}"\nabout = "{about}"\n'
    toml = ("[buzz]\nnative = true\n" + twin.format(id="t-captain", about="Routing ORCHID-72")
            + twin.format(id="t-observer", about="Routing COBALT-19")
            + '[[buzz.directory]]\nname = "Scout"\nrole = "bot"\nchannel_member = true\n')
    entries = load_task(make_task(tmp_path, toml=toml)).buzz.directory
    assert [(e.name, e.identity_id, e.about, e.channel_member) for e in entries] == [
        ("Taylor", "t-captain", "Routing ORCHID-72", False),
        ("Taylor", "t-observer", "Routing COBALT-19", False),
        ("Scout", "Scout", None, True),  # identity_id defaults to the name
    ]
    with pytest.raises(TaskError, match="'t-captain' is produced twice"):
        load_task(make_task(tmp_path / "again", toml="[buzz]\nnative = true\n" + twin.format(id="t-captain", about="")
                            + twin.format(id="t-captain", about="")))


def test_scripted_messages_keep_order_and_defaults(tmp_path: Path) -> None:
    toml = ("[buzz]\nnative = true\n"
            '[[buzz.directory]]\nname = "Scout"\nrole = "bot"\n'
            '[[buzz.scripted_messages]]\nlabel = "report"\nactor = "Scout"\ncontent = "@{orchestrator} 17"\n'
            "reply_to_task = true\n"
            '[[buzz.scripted_messages]]\nlabel = "beta"\nactor = "user"\ncontent = "BETA"\n'
            "mention_orchestrator = false\n")
    messages = load_task(make_task(tmp_path, toml=toml)).buzz.scripted_messages
    assert [(m.label, m.actor, m.reply_to_task, m.mention_orchestrator) for m in messages] == [
        ("report", "Scout", True, True), ("beta", "user", False, False)]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ('actor = "Nobody"\ncontent = "x"\nlabel = "a"\n', "scripted_messages[0].actor: 'Nobody' is neither"),
        ('actor = "user"\ncontent = "x"\nlabel = "a"\n[[buzz.scripted_messages]]\nactor = "user"\n'
         'content = "y"\nlabel = "a"\n', "scripted_messages[1].label: 'a' is used twice"),
    ],
)
def test_scripted_messages_are_checked(tmp_path: Path, block: str, message: str) -> None:
    with pytest.raises(TaskError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_task(make_task(tmp_path, toml="[buzz]\nnative = true\n[[buzz.scripted_messages]]\n" + block))
    with pytest.raises(TaskError, match="scripted_messages is set but native is false"):
        load_task(make_task(tmp_path / "plain", toml='[[buzz.scripted_messages]]\nactor = "user"\ncontent = "x"\n'
                            'label = "a"\n'.replace("[[buzz.", "[buzz]\n[[buzz.")))


def test_environment_is_required_without_docker_image(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"environment/Dockerfile.*docker_image"):
        load_task(make_task(tmp_path, dockerfile=None))


def test_prebuilt_image_needs_no_environment(tmp_path: Path) -> None:
    toml = '[environment]\ndocker_image = "ghcr.io/example/task:1"\n'
    task = load_task(make_task(tmp_path, dockerfile=None, toml=toml))
    assert task.image_ref("registry.local:5000", "suite") == "ghcr.io/example/task:1"


def test_digest_is_independent_of_location(tmp_path: Path) -> None:
    first = make_task(tmp_path / "a", extra={"tests/fixtures/x.json": "{}\n"})
    second = tmp_path / "b" / "demo-task"
    shutil.copytree(first, second)
    assert load_task(first).digest == load_task(second).digest
    assert len(load_task(first).digest) == 64
