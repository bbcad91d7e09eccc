"""A real git server in the local cluster for the dataset tests: Git's own `git http-backend`
(tests/support/gitserver/server.py) in a pod behind a Service, serving repositories the test
pushes with the host's git, and a registry.json over plain HTTP from the same pod.

The image is built by the project's own `hack/images.sh context`, on the Python base. The base
has no git and pods reach no Debian mirror, so Debian bookworm's git .deb is fetched on the host
once (`apt-get download`, cached under ~/.cache/buzz-operator/debian/git-server) and unpacked
into the build context; git's binaries need only libc, zlib and pcre2, which the base has.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.support.cluster import ROOT, hack, kubectl

CACHE = Path.home() / ".cache" / "buzz-operator"
DEBS = CACHE / "debian" / "git-server"
CONTEXT = CACHE / "images" / "ctx" / "git-server"
IMAGE = "docker.io/buzz-test/git-server:dev"
SOURCE = ROOT / "tests" / "support" / "gitserver"
PORT = 8080
# the parts of the .deb a server needs; docs and man pages only grow the image
_UNUSED = ("usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/bash-completion", "usr/share/perl5",
           "usr/share/gitweb", "usr/lib/git-core/git-gui", "usr/share/git-gui")


def _git_deb() -> Path:
    DEBS.mkdir(parents=True, exist_ok=True)
    found = sorted(DEBS.glob("git_*.deb"))
    if not found:
        subprocess.run(["apt-get", "download", "git"], cwd=DEBS, check=True, capture_output=True)
        found = sorted(DEBS.glob("git_*.deb"))
    return found[-1]


def build_image() -> str:
    """The git server image, built and imported once per content of its context (idempotent)."""
    deb = _git_deb()
    stamp = CONTEXT / ".source"
    source = f"{deb.name}\n{(SOURCE / 'server.py').read_text()}\n{(SOURCE / 'Dockerfile').read_text()}"
    if not stamp.is_file() or stamp.read_text() != source:
        shutil.rmtree(CONTEXT, ignore_errors=True)
        (CONTEXT / "rootfs").mkdir(parents=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(CONTEXT / "rootfs")], check=True)
        for unused in _UNUSED:
            shutil.rmtree(CONTEXT / "rootfs" / unused, ignore_errors=True)
        shutil.copy(SOURCE / "server.py", CONTEXT / "server.py")
        shutil.copy(SOURCE / "Dockerfile", CONTEXT / "Dockerfile")
        stamp.write_text(source)
    hack("images.sh", "context", IMAGE, str(CONTEXT))
    return IMAGE


def _manifests(namespace: str, name: str) -> list[dict[str, object]]:
    labels = {"app.kubernetes.io/name": name}
    probe = {"httpGet": {"path": "/healthz", "port": PORT}, "periodSeconds": 1}
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "git", "image": IMAGE, "imagePullPolicy": "Never",
                                 "ports": [{"containerPort": PORT}], "readinessProbe": probe}]},
    }
    service = {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": labels, "ports": [{"port": PORT, "targetPort": PORT}]},
    }
    return [pod, service]


@dataclass(frozen=True)
class GitServer:
    """The server as the host (tests, an in-process operator) and pods reach it: its ClusterIP."""

    base: str  # http://<clusterIP>:8080

    @property
    def git_base(self) -> str:
        """What spec.dataset.package.gitBase names: repositories are <git_base>/<org>/<name>.git."""
        return f"{self.base}/git"

    def repo_url(self, repo: str) -> str:
        return f"{self.git_base}/{repo}.git"

    def file_url(self, path: str) -> str:
        return f"{self.base}/files/{path}"

    def create_repo(self, repo: str) -> str:
        urllib.request.urlopen(urllib.request.Request(f"{self.base}/init/{repo}.git", method="POST"), timeout=10)
        return self.repo_url(repo)

    def put_file(self, path: str, body: bytes) -> str:
        urllib.request.urlopen(urllib.request.Request(self.file_url(path), data=body, method="PUT"), timeout=10)
        return self.file_url(path)

    def delete_repo(self, repo: str, namespace: str, pod: str) -> None:
        kubectl("-n", namespace, "exec", pod, "--", "rm", "-rf", f"/srv/data/git/{repo}.git")


def deploy(namespace: str, name: str = "git-server") -> GitServer:
    """The server in `namespace`, ready to answer (about 5 s once the image exists)."""
    build_image()
    for manifest in _manifests(namespace, name):
        kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    kubectl("-n", namespace, "wait", "--for=condition=Ready", f"pod/{name}", "--timeout=120s")
    ip = kubectl("-n", namespace, "get", "service", name, "-o", "jsonpath={.spec.clusterIP}").strip()
    server = GitServer(f"http://{ip}:{PORT}")
    deadline = time.monotonic() + 30
    while True:  # the Service's endpoints follow the pod's readiness by a moment
        try:
            urllib.request.urlopen(f"{server.base}/healthz", timeout=2)
            return server
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def push_dataset(server: GitServer, repo: str, work: Path, tasks: dict[str, dict[str, str]]) -> str:
    """A Terminal-Bench-style repository (tasks/<name>/<file>) committed with the host's git and
    pushed to `repo` on the server's main branch; returns the commit."""
    for task, files in tasks.items():
        for rel, text in files.items():
            path = work / "tasks" / task / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    git = ["git", "-C", str(work), "-c", "user.name=buzz-test", "-c", "user.email=test@buzz.invalid"]
    if not (work / ".git").is_dir():
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "dataset"], check=True)
    url = server.create_repo(repo)
    subprocess.run([*git, "push", "-q", url, "HEAD:refs/heads/main"], check=True, capture_output=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
