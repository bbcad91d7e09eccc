"""Cluster fixtures shared by the tiers that run sweeps and trials on the local stack (e2e,
integration/operator, integration/pod, faults): the cluster and Postgres (started through the
project's hack/ scripts when not running), the local registry holding the project's images, a
fresh namespace and relay database per test, the dev relay in the cluster behind a Service, and the
Secrets a BuzzSweep refers to.

Sweeps made by `sweep_body` pull their task, stack and operator images from the local registry
(hack/registry.sh: TLS and an htpasswd login) through `spec.imagePullSecrets`: the first pod of
each image on the node pulls it with the login (a push drops the node's stale copy, so a rebuilt
image is pulled again); tests/integration/operator/test_pull_secrets.py proves, pulling with
Always, that the login is checked and a wrong one is named (docs/registry.md#what-the-tests-prove).

A plain module the tiers' conftests import names from — not a plugin, and it imports nothing
that registers kopf handlers, so in-process operators started by tests see only their own."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.dev import deploy_relay
from buzz_operator.dev.localstack import host_ip, with_database
from buzz_operator.kube.client import Kube, connect
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import await_healthy
from buzz_operator.relay.tenant_models import RelayTarget

from tests.support.databases import scratch_database

ROOT = Path(__file__).resolve().parents[2]  # tests/support/ → the repository
RUN = Path(os.environ.get("BUZZ_RUN", "/var/tmp/buzz-operator"))
os.environ.setdefault("KUBECONFIG", str(RUN / "pki" / "kubeconfig"))
RELAY_URL = "ws://localhost:3600"


def hack(*args: str) -> str:
    """Run hack/<script> with `args` (the project's own idempotent service scripts); its stdout.
    A failure names the script and ends with its stderr's tail, which says why."""
    done = subprocess.run(["bash", str(ROOT / "hack" / args[0]), *args[1:]], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"hack/{' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout.strip()


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    """DSN of the throwaway Postgres (hack/postgres.sh). Each test should use its own schema or
    database objects keyed by a random id; the cluster is shared by the session."""
    if dsn := os.environ.get("BUZZ_PG_DSN"):
        return dsn
    hack("postgres.sh", "up")
    return hack("postgres.sh", "dsn")


# The Secret every sweep of sweep_body names in spec.imagePullSecrets (sweep_secrets makes it)
REGISTRY_SECRET = "registry-login"


@cache
def registry_address() -> str:
    """host:port of the local registry (hack/registry.sh address; it needs no running registry)."""
    return hack("registry.sh", "address")


def in_registry(image: str) -> str:
    """The local registry's name for one of the project's images, as hack/registry.sh pushes it:
    docker.io/buzz/stack:dev -> <address>/buzz/stack:dev."""
    return f"{registry_address()}/{image.split('/', 1)[1]}"


def dockerconfig_secret(name: str, dockerconfig: str) -> dict[str, Any]:
    import base64

    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64.b64encode(dockerconfig.encode()).decode()}}


async def create_registry_login(kube: Kube, namespace: str, dockerconfig: str) -> None:
    """The `registry-login` Secret every sweep of sweep_body pulls with (``dockerconfig``: the
    local_registry fixture's), for tests that make their sweep's Secrets themselves."""
    await kube.core.create_namespaced_secret(namespace, dockerconfig_secret(REGISTRY_SECRET, dockerconfig))


@pytest.fixture(scope="session")
def local_registry(kubeconfig: str) -> str:
    """The local registry up with every built image pushed (both idempotent; a push sends only
    what changed); its .dockerconfigjson, which holds the login's password."""
    hack("registry.sh", "up")
    hack("registry.sh", "push")
    return hack("registry.sh", "dockerconfig")


@pytest.fixture(scope="session")
def kubeconfig() -> str:
    """The local cluster's kubeconfig (hack/cluster-up.sh, a no-op when it already runs); exported
    as KUBECONFIG so kubectl, kopf and kubernetes_asyncio all talk to it."""
    path = os.environ.get("KUBECONFIG") or str(RUN / "pki" / "kubeconfig")
    if not os.environ.get("BUZZ_SKIP_CLUSTER_UP"):
        hack("cluster-up.sh")
    os.environ["KUBECONFIG"] = path
    # the kubectl built with the running cluster (cluster-up links $RUN/bin to its binaries)
    # matches its version; prefer it over any on PATH
    os.environ["PATH"] = f"{RUN / 'bin'}:{os.environ['PATH']}"
    return path


def kubectl(*args: str, stdin: str | None = None) -> str:
    return subprocess.run(["kubectl", *args], check=True, capture_output=True, text=True, input=stdin).stdout


def kubectl_json(*args: str) -> Any:
    """`kubectl <args> -o json`, parsed."""
    return json.loads(kubectl(*args, "-o", "json"))


# Pod Security Admission labels, as the README ("Pod Security") tells users to label namespaces:
# trial pods run task images built for Docker (root, a few of Docker's default capabilities), so
# their namespaces enforce `baseline`; the operator's own namespace can enforce `restricted`.
TRIAL_NAMESPACE_LABELS = {
    "pod-security.kubernetes.io/enforce": "baseline",
    "pod-security.kubernetes.io/enforce-version": "latest",
    "pod-security.kubernetes.io/warn": "baseline",
}
OPERATOR_NAMESPACE_LABELS = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest",
    "pod-security.kubernetes.io/warn": "restricted",
}


TERMINAL = frozenset({"Succeeded", "Failed"})


def settled_trials(namespace: str, count: int, deadline_s: float) -> list[dict[str, Any]]:
    """The namespace's BuzzTrials once ``count`` of them are Succeeded or Failed, or as they are at
    the deadline (the caller's assertions then say what is missing)."""
    deadline = time.monotonic() + deadline_s
    trials: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        trials = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
        if len(trials) == count and all((t.get("status") or {}).get("phase") in TERMINAL for t in trials):
            break
        time.sleep(2)
    return trials


def create_namespace(name: str, labels: dict[str, str] | None = None) -> None:
    """A namespace carrying the trial namespaces' Pod Security labels unless told otherwise."""
    import json

    body = {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": TRIAL_NAMESPACE_LABELS if labels is None else labels}}
    kubectl("create", "-f", "-", stdin=json.dumps(body))


@pytest.fixture(scope="session")
def image_volumes(kubeconfig: str) -> None:
    """Every node's runtime mounts image volumes, as the local cluster's containerd 2.2.9 does
    (docs/local-cluster.md#containerd-2); a cluster without them fails the test, so a broken
    default is never a quiet skip. Only a runtime chosen to lack them —
    BUZZ_CONTAINERD_VERSION=1.7, Debian's — skips it, saying so."""
    from buzz_operator.kube.runtimes import mounts_image_volumes

    found = kubectl("get", "nodes", "-o", "jsonpath={.items[*].status.nodeInfo.containerRuntimeVersion}").split()
    if found and all(mounts_image_volumes(version) for version in found):
        return
    why = (f"the cluster's runtime {found} mounts no image volumes (containerd >= 2.1 or CRI-O >= 1.31; "
           "docs/local-cluster.md#containerd-2)")
    if os.environ.get("BUZZ_CONTAINERD_VERSION") == "1.7":
        pytest.skip(f"spec.stack.mount image NOT tested: BUZZ_CONTAINERD_VERSION=1.7 chose a runtime without them; {why}")
    pytest.fail(f"spec.stack.mount image cannot be tested: {why}")


@pytest.fixture(scope="session")
def crds(kubeconfig: str) -> None:
    kubectl("apply", "-f", str(ROOT / "crds"))
    for name in ("buzzsweeps.bench.buzz.dev", "buzztrials.bench.buzz.dev"):
        kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")


@pytest.fixture
async def kube(kubeconfig: str) -> AsyncIterator[Kube]:
    client = await connect()
    yield client
    await client.close()


def _tier(request: pytest.FixtureRequest) -> str:
    """A short name of the test's directory (e2e, operator, pod, faults) for namespaces and databases."""
    return Path(str(request.node.path)).parent.name.replace("_", "")[:8]


@pytest.fixture
def namespace(kubeconfig: str, request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"{_tier(request)}-{uuid.uuid4().hex[:8]}"
    create_namespace(name)
    yield name
    # The operator's daemons put finalizers on trials; with the operator gone they would hold
    # the namespace in Terminating forever (kopf #833), so the test releases them itself.
    for kind in ("buzztrials", "buzzsweeps"):
        listed = subprocess.run(["kubectl", "-n", name, "get", kind, "-o", "name"], capture_output=True, text=True)
        for obj in listed.stdout.split():
            subprocess.run(["kubectl", "-n", name, "patch", obj, "--type=merge", "-p",
                            '{"metadata":{"finalizers":null}}'], capture_output=True)
    subprocess.run(["kubectl", "delete", "namespace", name, "--wait=false"], capture_output=True)


@pytest.fixture
def relay_db(pg_dsn: str, request: pytest.FixtureRequest) -> Iterator[str]:
    with scratch_database(pg_dsn, f"{_tier(request)}relay_{secrets.token_hex(6)}") as name:
        yield name


@dataclass(frozen=True)
class ClusterRelay:
    relay: deploy_relay.DevRelay
    target: RelayTarget  # what the test process (on the host) uses: ClusterIP + canonical Host
    owner: Keypair


@pytest.fixture
async def cluster_relay(kube: Kube, namespace: str, relay_db: str, pg_dsn: str) -> ClusterRelay:
    owner, relay_key = Keypair.generate(), Keypair.generate()
    relay = await deploy_relay.deploy(
        kube, namespace, name="relay", relay_url=RELAY_URL, owner_pubkey=owner.pubkey_hex,
        relay_secret_hex=relay_key.secret_hex, database_url=with_database(pg_dsn, relay_db, host=host_ip()),
    )
    target = RelayTarget(url=RELAY_URL, owner_secret_hex=owner.secret_hex,
                         pg_dsn=with_database(pg_dsn, relay_db), connect_url=f"ws://{relay.target}")
    await await_healthy(target, timeout_s=60)
    return ClusterRelay(relay, target, owner)



@pytest.fixture
async def sweep_secrets(kube: Kube, namespace: str, cluster_relay: ClusterRelay, local_registry: str) -> str:
    """Creates `relay-owner` (owner-key, postgres-dsn), `api-keys` (STANDIN_API_KEY) and
    `registry-login` (the local registry's login); returns the API key."""
    from buzz_operator.kube import objects

    await create_registry_login(kube, namespace, local_registry)

    api_key = f"standin-{secrets.token_hex(16)}"
    await objects.create_secret(kube, namespace, objects.secret_body(
        "relay-owner", {"owner-key": cluster_relay.owner.secret_hex, "postgres-dsn": cluster_relay.target.pg_dsn},
        labels={}, owner=None))
    await objects.create_secret(kube, namespace, objects.secret_body(
        "api-keys", {"STANDIN_API_KEY": api_key}, labels={}, owner=None))
    return api_key


def sweep_body(name: str, *, store_url: str, tasks: list[str], condition: str = "standin-oracle.yaml",
               attempts: int = 1, **spec: object) -> dict[str, object]:
    """A BuzzSweep over builtin tasks with an inline stand-in condition and the test's relay, its
    images pulled from the local registry with the `registry-login` Secret (a test's own `stack`,
    `stackImage`, `operatorImage`, `imagePullPolicy` or `imagePullSecrets` replace those)."""
    import json

    import yaml
    from buzz_operator.api.common import GROUP, VERSION

    manifest = yaml.safe_load((ROOT / "manifests" / condition).read_text())
    endpoints = json.loads((ROOT / "manifests" / "endpoints" / "standin.json").read_text())
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzSweep", "metadata": {"name": name},
        "spec": {
            "condition": {"inline": manifest},
            "endpoints": {"config": endpoints, "secretRef": {"name": "api-keys"}},
            "dataset": {"builtin": {}}, "include": tasks, "attempts": attempts,
            "relay": {"url": RELAY_URL, "serviceRef": {"name": "relay", "port": 3600},
                      "ownerKeySecretRef": {"name": "relay-owner", "key": "owner-key"},
                      "postgresDsnSecretRef": {"name": "relay-owner", "key": "postgres-dsn"}},
            "storage": {"url": store_url}, **registry_images(spec), **spec,
        },
    }


def registry_images(spec: dict[str, object]) -> dict[str, object]:
    """The image fields of a sweep pulling the project's images from the local registry."""
    images: dict[str, object] = {
        "taskImageRegistry": in_registry("docker.io/buzz-tasks"),
        "operatorImage": in_registry("docker.io/buzz/operator:dev"),
        "imagePullPolicy": "IfNotPresent",
        "imagePullSecrets": [{"name": REGISTRY_SECRET}],
    }
    if "stackImage" not in spec:  # the deprecated alias and spec.stack are exclusive
        images["stack"] = {"image": in_registry("docker.io/buzz/stack:dev"), "layout": "folder"}
    return images


@pytest.fixture
def make_sweep() -> object:
    return sweep_body
