"""Git over smart HTTP with dulwich (a pure-Python git client): the refs of a remote, and the
tree of one commit fetched at depth 1. Blocking; callers run it in a thread.

dulwich, not the git binary: the operator runs both on the host and from its image, which has
no git (hack/images.sh builds it from Debian's python3-minimal), and a library keeps the
operator's one process (no subprocess, no git config or credential helpers of the machine).
The fetch wants the pinned commit itself, as Harbor's `git fetch --depth 1 origin <sha>` does,
so the server must allow a want that no ref advertises (GitHub does; plain git needs
uploadpack.allowAnySHA1InWant, or the commit at a branch tip). Like Harbor's
`--filter=blob:none` clone it asks for the commit's trees only, then for the blobs of the task
folders it reads, in one more round trip: a repository of hundreds of tasks costs its trees and
the asked tasks' files. A server without filters (protocol v0, or uploadpack.allowFilter off)
sends the whole tree of the commit at once, which reads the same.
"""

from __future__ import annotations

import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence

import urllib3.exceptions
from dulwich.client import get_transport_and_path
from dulwich.config import ConfigDict
from dulwich.errors import GitProtocolError, NotGitRepository
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

TIMEOUT_S = 30
# what a remote that is down, refuses or answers nonsense raises through dulwich
FETCH_ERRORS = (GitProtocolError, NotGitRepository, urllib3.exceptions.HTTPError, OSError, KeyError, ValueError)
_fetches = 0


class GitError(Exception):
    """A remote that cannot be read, or a commit without the asked path; says which."""


class NoSuchFolder(GitError):
    """The commit has no folder at the asked path (the spec names a wrong path, not a bad server)."""


def _why(error: Exception) -> str:
    if isinstance(error, NotGitRepository):  # dulwich's answer to an HTTP 404 carries no text
        return "no git repository there (HTTP 404)"
    return f"{type(error).__name__}: {error}"


def fetch_count() -> int:
    """How many commits this process fetched (the tests prove a cached resolve fetches none)."""
    return _fetches


def _client(url: str):  # type: ignore[no-untyped-def]  (dulwich's client classes are untyped)
    config = ConfigDict()
    config.set((b"http",), b"timeout", str(TIMEOUT_S).encode())
    return get_transport_and_path(url, config=config)


def remote_refs(url: str) -> dict[str, str]:
    """`{ref name: commit}` of the remote (git ls-remote), peeled tags as `<tag>^{}`."""
    try:
        client, path = _client(url)
        listed = client.get_refs(path)
    except FETCH_ERRORS as error:
        raise GitError(f"cannot list the refs of {url}: {_why(error)}") from error
    refs = getattr(listed, "refs", listed)
    symrefs = getattr(listed, "symrefs", {}) or {}
    found = {name.decode(): sha.decode() for name, sha in refs.items() if sha is not None}
    # a smart-HTTP v2 listing may give HEAD only as a symref to its branch
    if "HEAD" not in found and (target := symrefs.get(b"HEAD")) is not None and target.decode() in found:
        found["HEAD"] = found[target.decode()]
    return found


class Fetched:
    """One commit of one remote, fetched at depth 1 into a bare repository on disk (a task tree
    can be large; memory holds none of it): its trees first, blobs when asked. Use as a context
    manager."""

    def __init__(self, url: str, commit: str) -> None:
        global _fetches
        self.url, self.commit = url, commit
        self._dir = tempfile.TemporaryDirectory(prefix="buzz-git-")
        self.repo = Repo.init_bare(self._dir.name)
        want = commit.encode()
        try:
            self._client, self._path = _client(url)
            self._client.fetch(self._path, self.repo, determine_wants=lambda refs, depth=None: [want], depth=1,
                               filter_spec=b"blob:none")
            _fetches += 1
            found = self.repo.object_store[want]
        except FETCH_ERRORS as error:
            self.close()
            raise GitError(f"cannot fetch commit {commit} from {url}: {_why(error)}") from error
        if not isinstance(found, Commit):
            self.close()
            raise GitError(f"{commit} of {url} is not a commit")
        self._root: Tree = self.repo.object_store[found.tree]  # type: ignore[assignment]

    def __enter__(self) -> Fetched:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.repo.close()  # its pack files are open; closed before the directory goes
        self._dir.cleanup()

    def _tree(self, path: str) -> Tree | None:
        tree = self._root
        for part in [p for p in path.split("/") if p not in ("", ".")]:
            try:
                mode, sha = tree[part.encode()]
            except KeyError:
                return None
            if not stat.S_ISDIR(mode):
                return None
            tree = self.repo.object_store[sha]  # type: ignore[assignment]
        return tree

    def _name(self, raw: bytes, prefix: str) -> str:
        name = raw.decode(errors="replace")
        # git checkout refuses these (fsck's badTree/hasDotdot); a folder or file written from
        # one would land outside the task folder
        if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name:
            raise GitError(f"{self.url} at {self.commit} has a tree entry {prefix}{name!r} no checkout would write")
        return name

    def _entries(self, tree: Tree, prefix: str) -> Iterator[tuple[str, int, bytes]]:
        for entry in tree.items():
            rel = f"{prefix}{self._name(entry.path, prefix)}"
            if stat.S_ISDIR(entry.mode):
                yield from self._entries(self.repo.object_store[entry.sha], f"{rel}/")  # type: ignore[arg-type]
            else:
                yield rel, entry.mode, entry.sha

    def prefetch(self, paths: Iterable[str]) -> None:
        """The blobs under the folders `paths` that the trees-only fetch left out, in one round
        trip (Harbor's sparse checkout of the task paths)."""
        wanted = []
        for path in paths:
            if (tree := self._tree(path)) is not None:
                wanted += [sha for _, mode, sha in self._entries(tree, "") if stat.S_ISREG(mode)]
        self._want_blobs(wanted)

    def _want_blobs(self, shas: Sequence[bytes]) -> None:
        missing = sorted({sha for sha in shas if sha not in self.repo.object_store})
        if not missing:
            return
        try:
            self._client.fetch(self._path, self.repo, determine_wants=lambda refs, depth=None: missing)
        except FETCH_ERRORS as error:
            raise GitError(f"cannot fetch the files of {self.commit} from {self.url}: {_why(error)}") from error
        if still := [sha for sha in missing if sha not in self.repo.object_store]:
            raise GitError(f"{self.url} did not send {len(still)} files of {self.commit} (e.g. {still[0].decode()})")

    def folders_with(self, path: str, marker: str) -> list[str]:
        """The names of the folders directly under `path` that hold a file `marker`."""
        tree = self._tree(path)
        if tree is None:
            raise NoSuchFolder(f"{self.url} has no folder {path!r} at {self.commit}")
        found = []
        for entry in tree.items():
            if stat.S_ISDIR(entry.mode):
                child: Tree = self.repo.object_store[entry.sha]  # type: ignore[assignment]
                if marker.encode() in child:
                    found.append(self._name(entry.path, f"{path}/"))
        return found

    def read_file(self, path: str) -> bytes | None:
        folder, _, name = path.rpartition("/")
        tree = self._tree(folder)
        if tree is None or name.encode() not in tree:
            return None
        mode, sha = tree[name.encode()]
        if not stat.S_ISREG(mode):
            return None
        self._want_blobs([sha])
        blob = self.repo.object_store[sha]
        return blob.data if isinstance(blob, Blob) else None

    def files(self, path: str) -> dict[str, bytes]:
        """Every file under the folder `path`, by relative path. Symlinks and submodules are
        refused: a task folder is plain files (Harbor materialises links inside the task; here
        one would be a file holding its target, so it is named instead)."""
        tree = self._tree(path)
        if tree is None:
            raise NoSuchFolder(f"{self.url} has no folder {path!r} at {self.commit}")
        entries = list(self._entries(tree, ""))
        for rel, mode, _ in entries:
            if not stat.S_ISREG(mode):
                kind = "a symlink" if stat.S_ISLNK(mode) else "a submodule"
                raise GitError(f"{path}/{rel} in {self.url} at {self.commit} is {kind}; task folders are fetched "
                               "as plain files")
        self._want_blobs([sha for _, _, sha in entries])
        return {rel: self.repo.object_store[sha].data for rel, _, sha in entries}  # type: ignore[union-attr]
