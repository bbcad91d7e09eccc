"""Harbor's dataset references resolved without I/O (dataset/registry.py): registry.json rows as
Harbor 0.25.0's DatasetSpec, name@version with Harbor's resolve_version, the repo form
org/name[@ref], ls-remote ref selection, and refusals that name the field and what exists."""

from __future__ import annotations

import json

import pytest
from buzz_operator.dataset import registry as ref

URL = "http://git.example/org/ds.git"
SHA = "a" * 40
FIELD = "spec.dataset.registry.name"


def registry(*rows: tuple[str, str, list[dict[str, object]]]) -> str:
    return json.dumps([{"name": n, "version": v, "description": "", "tasks": t} for n, v, t in rows])


def task(name: str, commit: str | None = SHA, url: str | None = URL) -> dict[str, object]:
    return {"name": name, "git_url": url, "git_commit_id": commit, "path": f"tasks/{name}"}


SPECS = ref.parse_registry(registry(("tb", "1.0", [task("a"), task("b")]), ("tb", "0.9", [task("a")]),
                                    ("tb", "2.0rc1", [task("a")]), ("other", "head", [])),
                           field=FIELD, origin="r.json")


def test_name_at_version_selects_that_version() -> None:
    spec = ref.select_dataset(SPECS, "tb@0.9", field=FIELD, origin="r.json")
    assert (spec.name, spec.version, [t.name for t in spec.tasks]) == ("tb", "0.9", ["a"])


def test_without_version_harbor_takes_the_highest_pep440_then_head() -> None:
    assert ref.select_dataset(SPECS, "tb", field=FIELD, origin="r.json").version == "2.0rc1"
    assert ref.resolve_version(["1.0", "head", "9"]) == "head"
    assert ref.resolve_version(["b-old", "c-new", "a"]) == "c-new"  # none PEP 440: lexically last


def test_a_typo_names_the_field_and_the_datasets_there() -> None:
    with pytest.raises(ref.DatasetRefError) as refused:
        ref.select_dataset(SPECS, "tbb@1.0", field=FIELD, origin="r.json")
    assert refused.value.field == FIELD
    assert str(refused.value) == f"{FIELD}: no dataset 'tbb' in r.json; it has: other, tb"


def test_a_missing_version_names_the_versions_there() -> None:
    with pytest.raises(ref.DatasetRefError, match=r"no version '3' in r.json; its versions: 0.9, 1.0, 2.0rc1"):
        ref.select_dataset(SPECS, "tb@3", field=FIELD, origin="r.json")


def test_registry_tasks_are_harbor_git_tasks_with_the_bare_name_as_source() -> None:
    spec = ref.select_dataset(SPECS, "tb@1.0", field=FIELD, origin="r.json")
    tasks = ref.registry_tasks(spec, field=FIELD, source=spec.name)
    assert [t.harbor_task() for t in tasks] == [
        {"path": "tasks/a", "git_url": URL, "git_commit_id": SHA, "source": "tb"},
        {"path": "tasks/b", "git_url": URL, "git_commit_id": SHA, "source": "tb"},
    ]


def test_a_task_without_git_url_is_refused_outside_a_repository() -> None:
    spec = ref.parse_registry(registry(("x", "1", [task("a", commit=None, url=None)])), field=FIELD, origin="r")[0]
    with pytest.raises(ref.DatasetRefError, match="has no git_url"):
        ref.registry_tasks(spec, field=FIELD, source="x")
    # in a repository's own registry.json it takes the repository and its commit, as Harbor's repo client
    inside = ref.registry_tasks(spec, field=FIELD, source="x", default_url=URL, default_commit="b" * 40)
    assert (inside[0].git_url, inside[0].commit) == (URL, "b" * 40)


def test_two_tasks_of_one_name_are_refused() -> None:
    rows = [task("a"), {"name": "a2", "git_url": URL, "git_commit_id": SHA, "path": "other/a"}]
    spec = ref.parse_registry(registry(("x", "1", rows)), field=FIELD, origin="r")[0]
    with pytest.raises(ref.DatasetRefError, match="two tasks are named 'a'"):
        ref.registry_tasks(spec, field=FIELD, source="x")


@pytest.mark.parametrize("text, message", [
    ("{", "r.json is not JSON"),
    ('{"name": "x"}', "not a registry.json"),
    ('[{"name": "x", "version": "1", "description": ""}]', r"dataset \[0\]: tasks: Field required"),
])
def test_malformed_registries_are_refused_naming_the_origin(text: str, message: str) -> None:
    with pytest.raises(ref.DatasetRefError, match=message):
        ref.parse_registry(text, field="spec.dataset.registry.url", origin="r.json")


@pytest.mark.parametrize("path, expected", [("tasks/a", "tasks/a"), ("tasks/../b", "b"), ("./x/y", "x/y")])
def test_task_paths_fold_as_harbor_normalises_them(path: str, expected: str) -> None:
    assert ref.normalize_task_path(path, field=FIELD) == expected


@pytest.mark.parametrize("path", ["/etc", "../up", "a/../../up", "."])
def test_task_paths_outside_the_repository_are_refused(path: str) -> None:
    with pytest.raises(ref.DatasetRefError):
        ref.normalize_task_path(path, field=FIELD)


def test_package_names_read_as_harbors_repo_form() -> None:
    repo = ref.parse_package("org/ds@v1", "http://git.local/git/", field="spec.dataset.package.name")
    assert (repo.org, repo.name, repo.git_url, repo.ref, repo.pinned) == (
        "org", "ds", "http://git.local/git/org/ds.git", "v1", None)
    assert ref.parse_package(f"org/ds.git@{SHA}", "https://github.com", field="f").pinned == SHA


@pytest.mark.parametrize("name, message", [
    ("org/ds@sha256:abcd", "Harbor Hub packages"),
    ("org/ds@", "empty ref"),
    ("ds", "is not org/name"),
    ("a/b/c", "is not org/name"),
])
def test_package_names_that_are_not_git_repositories_are_refused(name: str, message: str) -> None:
    with pytest.raises(ref.DatasetRefError, match=message) as refused:
        ref.parse_package(name, "https://github.com", field="spec.dataset.package.name")
    assert refused.value.field == "spec.dataset.package.name"


REFS = {"HEAD": "1" * 40, "refs/heads/main": "1" * 40, "refs/tags/v1": "2" * 40, "refs/tags/v1^{}": "3" * 40,
        "refs/heads/feature/x": "4" * 40}


@pytest.mark.parametrize("wanted, sha", [(None, "1" * 40), ("main", "1" * 40), ("v1", "3" * 40), ("x", "4" * 40)])
def test_refs_are_selected_as_harbors_ls_remote_selection(wanted: str | None, sha: str) -> None:
    assert ref.select_ref(REFS, wanted, field="f", git_url=URL) == sha


def test_an_unknown_ref_names_the_branches_and_tags() -> None:
    with pytest.raises(ref.DatasetRefError, match=r"no ref 'nope'; branches: feature/x, main; tags: v1"):
        ref.select_ref(REFS, "nope", field="spec.dataset.package.name", git_url=URL)


def test_the_implicit_dataset_is_named_as_harbor_names_it() -> None:
    repo = ref.parse_package("org/ds", "https://github.com", field="f")
    source, tasks = ref.implicit_tasks(repo, SHA, ["b", "a"], "tasks", field="f", host="github.com")
    assert source == f"github.com/org/ds/tree/{SHA}/tasks"
    assert [(t.path, t.commit) for t in tasks] == [("tasks/a", SHA), ("tasks/b", SHA)]
    assert ref.implicit_tasks(repo, SHA, ["a"], ".", field="f", host="h")[1][0].path == "a"
    with pytest.raises(ref.DatasetRefError, match="no task folders"):
        ref.implicit_tasks(repo, SHA, [], "tasks", field="spec.dataset.package.path", host="h")


def test_the_cache_key_is_the_commit_and_path_whatever_the_url() -> None:
    one = ref.GitTask(URL, SHA, "tasks/a", "tb")
    mirror = ref.GitTask("https://mirror/org/ds.git", SHA, "tasks/a", "tb")
    assert ref.task_cache_key(one, SHA) == ref.task_cache_key(mirror, SHA)
    assert ref.task_cache_key(one, SHA) != ref.task_cache_key(ref.GitTask(URL, SHA, "tasks/b", "tb"), SHA)


def test_resolution_is_pure() -> None:
    """In a fresh interpreter, the resolver loads no git client, HTTP client, Kubernetes or storage."""
    import subprocess
    import sys

    code = "import json, sys, buzz_operator.dataset.registry; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                       text=True).stdout)
    forbidden = ("dulwich", "urllib3", "urllib.request", "http.client", "kubernetes_asyncio", "kopf",
                 "buzz_operator.kube", "buzz_operator.storage", "buzz_operator.sweep")
    assert [m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden)] == []
