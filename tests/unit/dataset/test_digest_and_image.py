"""Content digests (whole task, environment/ only) and the image references built from them."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from buzz_operator.dataset import TaskError, load_task, tree_digest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.dataset.task_factory import make_task


def test_digest_changes_when_any_file_changes(tmp_path: Path) -> None:
    root = make_task(tmp_path)
    before = load_task(root)
    (root / "tests" / "test.sh").write_text("#!/usr/bin/env bash\necho 0 > /logs/verifier/reward.txt\n")
    after = load_task(root)
    assert after.digest != before.digest
    # Tests are not part of the image: the env digest (and so the image tag) stays.
    assert after.env_digest == before.env_digest


def test_env_digest_changes_with_the_build_context(tmp_path: Path) -> None:
    root = make_task(tmp_path)
    before = load_task(root)
    (root / "environment" / "requirements.txt").write_text("requests\n")
    after = load_task(root)
    assert after.env_digest != before.env_digest and after.digest != before.digest


def test_digest_covers_names_not_only_bytes(tmp_path: Path) -> None:
    root = make_task(tmp_path, extra={"tests/a.txt": "same"})
    before = load_task(root).digest
    (root / "tests" / "a.txt").rename(root / "tests" / "b.txt")
    assert load_task(root).digest != before


def test_digest_ignores_bytecode_caches_and_mtimes(tmp_path: Path) -> None:
    root = make_task(tmp_path, extra={"tests/verify.py": "print(1)\n"})
    before = load_task(root).digest
    (root / "tests" / "__pycache__").mkdir()
    (root / "tests" / "__pycache__" / "verify.cpython-311.pyc").write_bytes(b"\x00\x01")
    (root / "tests" / "stray.pyc").write_bytes(b"\x00")
    os.utime(root / "tests" / "verify.py", (1, 1))
    assert load_task(root).digest == before


def test_missing_directory_digests_like_an_empty_one(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert tree_digest(tmp_path / "absent") == tree_digest(tmp_path / "empty")


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet="abcdef", min_size=1, max_size=6), st.binary(max_size=32), min_size=1, max_size=6
    ),
    st.randoms(use_true_random=False),
)
def test_digest_does_not_depend_on_creation_order(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes], rng: random.Random
) -> None:
    names = list(files)
    shuffled = list(names)
    rng.shuffle(shuffled)
    roots = []
    for order in (names, shuffled):
        root = tmp_path_factory.mktemp("tree")
        for name in order:
            (root / name).write_bytes(files[name])
        roots.append(root)
    assert tree_digest(roots[0]) == tree_digest(roots[1])


def test_image_ref_uses_the_environment_digest(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path, name="reply-to-thread"))
    ref = task.image_ref("registry.local:5000/", "buzz-native")
    assert ref == f"registry.local:5000/buzz-native-reply-to-thread:{task.env_digest[:16]}"


def test_image_ref_sanitises_names_that_are_not_oci(tmp_path: Path) -> None:
    # a folder (or `[task].name`) Harbor accepts but OCI does not: lowercased, runs of other
    # characters one "-", as Harbor sanitises its Kubernetes names; the tag stays the content's
    task = load_task(make_task(tmp_path, name="Hello_World"))
    assert task.image_ref("registry.local", "suite") == f"registry.local/suite-hello-world:{task.env_digest[:16]}"
    # a valid repository is kept exactly (every name accepted before keeps its image)
    assert task.image_ref("r", "suite").startswith("r/suite-hello-world:")


def test_image_ref_uses_the_short_name_of_task_name(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path, name="folder", toml='[task]\nname = "Acme/Log.Parse"\n'))
    assert task.name == "folder" and task.harbor_name == "Acme/Log.Parse" and task.short_name == "Log.Parse"
    assert task.image_ref("r", "suite") == f"r/suite-log-parse:{task.env_digest[:16]}"
    plain = load_task(make_task(tmp_path, name="my_task.v2"))
    assert plain.image_ref("r", "ds") == f"r/ds-my_task.v2:{plain.env_digest[:16]}"


def test_image_ref_refuses_a_name_with_nothing_left(tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path, name="_"))
    with pytest.raises(TaskError, match="empty once sanitised"):
        task.image_ref("r", "")
