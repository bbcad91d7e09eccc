"""inputs/fetch/git.py on a repository on local disk (dulwich's local transport; the smart-HTTP
path runs against a real git server in tests/integration/operator/test_git_datasets.py): a task
folder's files come back as bytes, and a tree entry no checkout would write, a symlink, a
missing folder are refused naming them."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.inputs.fetch import git
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo


def commit_of(repo_dir: Path, entries: dict[bytes, tuple[int, bytes]]) -> str:
    """A one-commit bare repository whose tasks/t tree holds `entries` ({name: (mode, data)})."""
    repo = Repo.init_bare(str(repo_dir), mkdir=True)
    task = Tree()
    for name, (mode, data) in entries.items():
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        task.add(name, mode, blob.id)
    tasks, root = Tree(), Tree()
    repo.object_store.add_object(task)
    tasks.add(b"t", 0o040000, task.id)
    repo.object_store.add_object(tasks)
    root.add(b"tasks", 0o040000, tasks.id)
    repo.object_store.add_object(root)
    commit = Commit()
    commit.tree = root.id
    commit.author = commit.committer = b"t <t@buzz.invalid>"
    commit.commit_time = commit.author_time = 0
    commit.commit_timezone = commit.author_timezone = 0
    commit.message = b"tasks"
    repo.object_store.add_object(commit)
    repo.refs[b"refs/heads/main"] = commit.id
    repo.close()
    return commit.id.decode()


def test_a_folder_comes_back_as_its_files(tmp_path: Path) -> None:
    sha = commit_of(tmp_path / "r.git", {b"task.toml": (0o100644, b"x"), b"run.sh": (0o100755, b"echo")})
    with git.Fetched(str(tmp_path / "r.git"), sha) as fetched:
        assert fetched.folders_with("tasks", "task.toml") == ["t"]
        assert fetched.files("tasks/t") == {"task.toml": b"x", "run.sh": b"echo"}
        assert fetched.read_file("tasks/t/task.toml") == b"x" and fetched.read_file("tasks/none") is None
        with pytest.raises(git.NoSuchFolder, match="has no folder 'tasks/u'"):
            fetched.files("tasks/u")
    assert git.remote_refs(str(tmp_path / "r.git"))["refs/heads/main"] == sha


@pytest.mark.parametrize("name, mode, message", [
    (b"..", 0o100644, r"tree entry '\.\.' no checkout would write"),
    (b"link", 0o120000, "tasks/t/link in .* is a symlink"),
])
def test_entries_no_checkout_would_write_are_refused(tmp_path: Path, name: bytes, mode: int, message: str) -> None:
    sha = commit_of(tmp_path / "r.git", {b"task.toml": (0o100644, b"x"), name: (mode, b"../../etc/passwd")})
    with git.Fetched(str(tmp_path / "r.git"), sha) as fetched, pytest.raises(git.GitError, match=message):
        fetched.files("tasks/t")


def test_a_task_folder_named_dot_dot_is_refused(tmp_path: Path) -> None:
    repo = Repo.init_bare(str(tmp_path / "r.git"), mkdir=True)
    marker, task, tasks, root = Blob.from_string(b"x"), Tree(), Tree(), Tree()
    task.add(b"task.toml", 0o100644, marker.id)
    tasks.add(b"..", 0o040000, task.id)
    root.add(b"tasks", 0o040000, tasks.id)
    commit = Commit()
    commit.tree, commit.message = root.id, b"up"
    commit.author = commit.committer = b"t <t@buzz.invalid>"
    commit.commit_time = commit.author_time = commit.commit_timezone = commit.author_timezone = 0
    for obj in (marker, task, tasks, root, commit):
        repo.object_store.add_object(obj)
    repo.close()
    with git.Fetched(str(tmp_path / "r.git"), commit.id.decode()) as fetched, \
            pytest.raises(git.GitError, match=r"tree entry tasks/'\.\.'"):
        fetched.folders_with("tasks", "task.toml")


def test_an_absent_commit_names_the_remote(tmp_path: Path) -> None:
    commit_of(tmp_path / "r.git", {b"task.toml": (0o100644, b"x")})
    with pytest.raises(git.GitError, match=f"cannot fetch commit {'0' * 40} from {tmp_path}/r.git"):
        git.Fetched(str(tmp_path / "r.git"), "0" * 40)
