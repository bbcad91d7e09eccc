"""Harbor's dataset forms against a real git server in the cluster (tests/support/git_server.py:
Git's own http-backend in a pod): a Terminal-Bench-style repository is pushed with the host's
git, a registry.json pins its commit, and

- spec.dataset.registry by URL and by ConfigMap, and spec.dataset.package (the repository's
  tasks/ folder, or a dataset of its own registry.json), resolve to the pushed tasks with their
  digests; a second resolve fetches nothing (it works with the repository gone);
- a typo, a missing version, an unknown ref and a Hub content hash are refused at once, naming
  the field and what exists; an unreachable registry or git server names the field and the URL;
- one sweep over the registry dataset runs through the operator to scored bundles whose
  config.json records Harbor's git tasks, and Harbor's own code reads them (harbor_checker)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.api.sweep import DatasetSource
from buzz_operator.dataset import load_dataset, load_task
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import git, git_datasets
from kopf.testing import KopfRunner

from tests.support import git_server
from tests.support.cluster import kubectl_json
from tests.support.harbor_venv import harbor_check, harbor_releases, problems

ROOT = Path(__file__).resolve().parents[3]
REPO = "org/tb-mini"
# the builtin hello-file's image (hack/images.sh builds it): the registry's tasks pin it as
# docker_image, as Terminal-Bench tasks pin prebuilt images
HELLO = ROOT / "tasks" / "hello-file"


def task_files(instruction: str) -> dict[str, str]:
    image = load_task(HELLO).image_ref("docker.io/buzz-tasks", "builtin")
    toml = (HELLO / "task.toml").read_text().replace("[environment]\n", f'[environment]\ndocker_image = "{image}"\n')
    return {
        "task.toml": toml,
        "instruction.md": instruction,
        "tests/test.sh": (HELLO / "tests" / "test.sh").read_text(),
        "solution/solve.sh": (HELLO / "solution" / "solve.sh").read_text(),
        "environment/Dockerfile": (HELLO / "environment" / "Dockerfile").read_text(),
    }


def registry_rows(url: str, commit: str) -> list[dict[str, Any]]:
    def entry(name: str) -> dict[str, Any]:
        return {"name": name, "git_url": url, "git_commit_id": commit, "path": f"tasks/{name}"}

    return [
        {"name": "tb-mini", "version": "1.0", "description": "both", "tasks": [entry("hello-a"), entry("hello-b")]},
        {"name": "tb-mini", "version": "0.9", "description": "one", "tasks": [entry("hello-a")]},
        {"name": "tb-other", "version": "head", "description": "", "tasks": [entry("hello-b")]},
    ]


@pytest.fixture
def served(namespace: str, tmp_path: Path) -> dict[str, Any]:
    """The server in the test's namespace, the repository pushed, registry.json by URL and ConfigMap."""
    server = git_server.deploy(namespace)
    work = tmp_path / "repo"
    tasks = {"hello-a": task_files("Create a file at `/app/hello.txt` whose content is exactly `Hello, world!`.\n"),
             "hello-b": task_files("Write `Hello, world!` to `/app/hello.txt`, nothing else.\n")}
    git_server.push_dataset(server, REPO, work, tasks)
    url = server.repo_url(REPO)
    commit = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    # the repository's own registry.json (Harbor's repo form with a dataset name): paths only
    (work / "registry.json").write_text(json.dumps([{"name": "inrepo", "version": "1", "description": "",
                                                     "tasks": [{"name": "hello-b", "path": "tasks/hello-b"}]}]))
    subprocess.run(["git", "-C", str(work), "add", "registry.json"], check=True)
    subprocess.run(["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@buzz.invalid", "commit", "-qm",
                    "registry"], check=True)
    subprocess.run(["git", "-C", str(work), "push", "-q", url, "HEAD:refs/heads/main"], check=True, capture_output=True)
    registry = json.dumps(registry_rows(url, commit))
    registry_url = server.put_file("registry.json", registry.encode())
    git_server.kubectl("-n", namespace, "create", "configmap", "tb-registry", f"--from-literal=registry.json={registry}")
    return {"server": server, "commit": commit, "work": work, "registry_url": registry_url}


def registry(name: str, **where: Any) -> Any:
    return DatasetSource.model_validate({"registry": {"name": name, **where}}).registry


def package(name: str, **fields: Any) -> Any:
    return DatasetSource.model_validate({"package": {"name": name, **fields}}).package


async def refused(call: Any) -> str:
    with pytest.raises(InputError) as error:
        await call
    return str(error.value)


async def test_registry_and_package_forms_resolve_fetch_once_and_refuse_by_name(  # type: ignore[no-untyped-def]
        namespace, kube, served, tmp_path: Path, capsys) -> None:
    server, commit, work = served["server"], served["commit"], served["work"]
    cache = tmp_path / "cache"
    expected = {name: load_task(work / "tasks" / name).digest for name in ("hello-a", "hello-b")}

    before, started = git.fetch_count(), time.monotonic()
    by_url = await git_datasets.load_registry(kube, namespace, registry("tb-mini@1.0", url=served["registry_url"]),
                                                  cache)
    fetch_s = time.monotonic() - started
    assert git.fetch_count() == before + 1  # both tasks share one commit: one fetch
    assert {t.name: t.digest for t in load_dataset(by_url.path)} == expected
    assert by_url.name == "tb-mini"
    assert by_url.origins["hello-a"] == {"path": "tasks/hello-a", "git_url": server.repo_url(REPO),
                                         "git_commit_id": commit, "source": "tb-mini"}

    started = time.monotonic()
    by_map = await git_datasets.load_registry(kube, namespace, registry("tb-mini", configMapRef={"name": "tb-registry"}),
                                                  cache)
    cached_s = time.monotonic() - started
    assert git.fetch_count() == before + 1 and by_map == by_url  # 1.0 is Harbor's pick, from the cache
    older = await git_datasets.load_registry(kube, namespace, registry("tb-mini@0.9", url=served["registry_url"]),
                                                 cache)
    assert [t.name for t in load_dataset(older.path)] == ["hello-a"] and git.fetch_count() == before + 1

    head = await git_datasets.load_package(package(f"{REPO}@main", gitBase=server.git_base), cache)
    assert {t.name for t in load_dataset(head.path)} == {"hello-a", "hello-b"}
    assert {t.name: t.digest for t in load_dataset(head.path)} == expected  # the tasks did not change
    pinned_commit = head.origins["hello-a"]["git_commit_id"]
    assert head.origins["hello-a"]["source"] == f"{server.base.removeprefix('http://').split(':')[0]}/org/tb-mini/tree/{pinned_commit}/tasks"
    inrepo = await git_datasets.load_package(package(REPO, gitBase=server.git_base, dataset="inrepo"), cache)
    assert [t.name for t in load_dataset(inrepo.path)] == ["hello-b"]
    assert inrepo.origins["hello-b"] == {"path": "tasks/hello-b", "git_url": server.repo_url(REPO),
                                         "git_commit_id": pinned_commit, "source": "inrepo"}

    # refusals: as soon as the registry is read (no git fetch), naming the field
    # and what exists
    before = git.fetch_count()
    message = await refused(git_datasets.load_registry(
        kube, namespace, registry("tb-mnii@1.0", configMapRef={"name": "tb-registry"}), cache))
    assert message == ("spec.dataset.registry.name: no dataset 'tb-mnii' in ConfigMap tb-registry key registry.json; "
                       "it has: tb-mini, tb-other"), message
    message = await refused(git_datasets.load_registry(
        kube, namespace, registry("tb-mini@2.0", url=served["registry_url"]), cache))
    assert message.startswith("spec.dataset.registry.name: dataset 'tb-mini' has no version '2.0'")
    assert message.endswith("its versions: 0.9, 1.0"), message
    assert git.fetch_count() == before
    message = await refused(git_datasets.load_package(package(f"{REPO}@v9", gitBase=server.git_base), cache))
    assert message == (f"spec.dataset.package.name: {server.repo_url(REPO)} has no ref 'v9'; branches: main; "
                       "tags: none"), message
    message = await refused(git_datasets.load_package(package(f"{REPO}@sha256:00ff", gitBase=server.git_base),
                                                             cache))
    assert message.startswith("spec.dataset.package.name:") and "Harbor Hub packages" in message
    message = await refused(git_datasets.load_package(package(REPO, gitBase=server.git_base, path="nope"),
                                                             cache))
    assert message == f"spec.dataset.package.path: {server.repo_url(REPO)} has no folder 'nope' at {pinned_commit}"
    message = await refused(git_datasets.load_registry(
        kube, namespace, registry("tb-mini", configMapRef={"name": "tb-registry", "key": "nope.json"}), cache))
    assert message == "spec.dataset.registry.configMapRef.key: ConfigMap tb-registry has no key 'nope.json'; its keys: registry.json"

    # unreachable: the field and the URL
    closed = server.base.rsplit(":", 1)[0] + ":1"
    message = await refused(git_datasets.load_registry(
        kube, namespace, registry("tb-mini", url=f"{closed}/registry.json"), cache))
    assert message.startswith(f"spec.dataset.registry.url: cannot read {closed}/registry.json:"), message
    message = await refused(git_datasets.load_package(package(REPO, gitBase=f"{closed}/git"), cache))
    assert message.startswith(f"spec.dataset.package.gitBase: cannot list the refs of {closed}/git/{REPO}.git"), message
    message = await refused(git_datasets.load_package(package("org/absent", gitBase=server.git_base), cache))
    assert "no git repository there" in message and message.startswith("spec.dataset.package.gitBase:"), message

    # blob-less, as Harbor's clone: the commit's trees first, then only the asked folder's files
    with git.Fetched(server.repo_url(REPO), commit) as fetched:
        def blobs() -> int:
            return sum(1 for sha in fetched.repo.object_store if fetched.repo.object_store[sha].type_name == b"blob")

        trees_only = blobs()
        assert sorted(fetched.files("tasks/hello-a")) == sorted(task_files("x"))
        assert (trees_only, blobs()) == (0, len(task_files("x")))

    # the cache: with the repository gone from the server the pinned registry still resolves, fetching nothing
    server.delete_repo(REPO, namespace, "git-server")
    fetches = git.fetch_count()
    again = await git_datasets.load_registry(kube, namespace, registry("tb-mini@1.0", url=served["registry_url"]),
                                                 cache)
    assert again == by_url and git.fetch_count() == fetches
    message = await refused(git_datasets.load_registry(
        kube, namespace, registry("tb-mini@1.0", url=served["registry_url"]), tmp_path / "cold"))
    assert message.startswith("spec.dataset.registry: cannot fetch commit") and server.repo_url(REPO) in message
    with capsys.disabled():
        print(f"\n[git datasets] registry resolve with fetch {fetch_s:.2f}s, cached resolve {cached_s:.3f}s")




def condition(body: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == type_), None)


def test_a_registry_sweep_runs_to_bundles_harbor_reads(  # type: ignore[no-untyped-def]
        namespace, crds, sweep_secrets, make_sweep, served, tmp_path: Path, monkeypatch) -> None:
    """A typo is refused in the sweep's status; the right name runs both tasks to reward 1.0."""
    monkeypatch.setenv("BUZZ_DATASET_CACHE", str(tmp_path / "cache"))
    store = tmp_path / "store"
    body = make_sweep("tb", store_url=f"file://{store}", tasks=[], parallelism=2)
    body["spec"]["dataset"] = {"registry": {"name": "tb-mini@1.0", "configMapRef": {"name": "tb-registry"}}}
    typo = json.loads(json.dumps(body))
    typo["metadata"]["name"] = "typo"
    typo["spec"]["dataset"]["registry"]["name"] = "tb-mnii@1.0"
    with KopfRunner(["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"], timeout=60) as runner:
        for sweep_body in (typo, body):
            subprocess.run(["kubectl", "-n", namespace, "apply", "-f", "-"], input=json.dumps(sweep_body), check=True,
                           capture_output=True, text=True)
        deadline = time.monotonic() + 60
        while not ((accepted := condition(kubectl_json("-n", namespace, "get", "buzzsweep", "typo"), "Accepted"))
                   and accepted["status"] == "False") and time.monotonic() < deadline:
            time.sleep(1)
        # the status carries it as every dataset input error: InvalidSpec, the field, what exists
        assert accepted and (accepted["reason"], accepted["message"]) == ("InvalidSpec", (
            "spec.dataset.registry.name: no dataset 'tb-mnii' in ConfigMap tb-registry key registry.json; "
            "it has: tb-mini, tb-other")), accepted
        deadline, sweep = time.monotonic() + 420, None
        while time.monotonic() < deadline:
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "tb")
            if (done := condition(sweep, "Complete")) and done["status"] == "True":
                break
            time.sleep(2)
        else:
            raise AssertionError(f"the sweep did not complete: {json.dumps((sweep or {}).get('status'))[:2000]}")
    assert runner.exception is None, runner.output
    status = sweep["status"]
    assert (status["total"], status["succeeded"], status["meanReward"]) == (2, 2, 1.0), status
    assert all(t["spec"]["sweepName"] == "tb" for t in kubectl_json("-n", namespace, "get", "buzztrials")["items"])
    url, commit = served["server"].repo_url(REPO), served["commit"]
    config = json.loads((store / "tb" / "config.json").read_text())
    assert config["tasks"] == [{"path": f"tasks/{n}", "git_url": url, "git_commit_id": commit, "source": "tb-mini"}
                               for n in ("hello-a", "hello-b")]
    lock = json.loads((store / "tb" / "lock.json").read_text())
    assert lock["dataset"] == "tb-mini" and sorted(lock["tasks"]) == ["hello-a", "hello-b"]
    for trial in kubectl_json("-n", namespace, "get", "buzztrials")["items"]:
        result = json.loads((store / "tb" / trial["metadata"]["name"] / "result.json").read_text())
        assert result["task_id"] == {"git_url": url, "git_commit_id": commit, "path": f"tasks/{trial['spec']['task']}"}
        assert result["source"] == "tb-mini" and result["verifier_result"]["rewards"]["reward"] == 1.0
    reports = [r for release in harbor_releases() for r in harbor_check(("sweep", store / "tb"), release=release)]
    assert not problems(reports), problems(reports)
    assert sorted(reports[0]["resume_kept"]) == sorted(t["metadata"]["name"] for t in
                                                       kubectl_json("-n", namespace, "get", "buzztrials")["items"])


def test_the_operator_image_fetches_without_git(namespace, served) -> None:  # type: ignore[no-untyped-def]
    """The operator image has no git binary: dulwich fetches the pinned commit from the server's
    Service, as the operator in its pod (the Helm chart) resolves a registry dataset. (By
    ClusterIP: the local cluster runs no DNS for pods.)"""
    from tests.support.cluster import hack

    hack("images.sh", "build", "operator")
    url = served["server"].repo_url(REPO)
    script = ("import shutil\nfrom buzz_operator.inputs.fetch.git import Fetched\n"
              f"with Fetched({url!r}, {served['commit']!r}) as f:\n"
              "    print(shutil.which('git'), sorted(f.folders_with('tasks', 'task.toml')), len(f.files('tasks/hello-a')))")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fetch", "namespace": namespace},
           "spec": {"restartPolicy": "Never", "containers": [{
               "name": "fetch", "image": "docker.io/buzz/operator:dev", "imagePullPolicy": "Never",
               "command": ["python3", "-c", script]}]}}
    git_server.kubectl("apply", "-f", "-", stdin=json.dumps(pod))
    deadline = time.monotonic() + 120
    while (phase := kubectl_json("-n", namespace, "get", "pod", "fetch")["status"].get("phase")) not in (
            "Succeeded", "Failed") and time.monotonic() < deadline:
        time.sleep(1)
    logs = git_server.kubectl("-n", namespace, "logs", "fetch").strip()
    assert (phase, logs) == ("Succeeded", "None ['hello-a', 'hello-b'] 5")
