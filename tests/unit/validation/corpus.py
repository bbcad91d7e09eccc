"""Bad inputs a user can give a BuzzSweep, each with the field its refusal must name.

Shared by the unit tier (tests/unit/validation: the pure stages) and the faults tier
(tests/faults/test_bad_inputs.py: every case through a real apiserver and one operator).
Each case mutates a valid sweep body (the stand-in oracle condition over builtin tasks):

- stage "schema": the apiserver's CRD schema refuses the create — its OpenAPI part, or its CEL
  rules (x-kubernetes-validations) for the cross-field ones such as "exactly one of" (pydantic
  refuses it too, the schema being generated from the same model);
- stage "accept": the object is stored and the operator sets Accepted=False; the check needs
  nothing but the spec and the builtin dataset, so the unit tier runs it too;
- stage "cluster": Accepted=False too, but only visible with the cluster's objects (a missing
  ConfigMap or Secret, a wrong owner key, an image the node does not have).

`objects` lists ConfigMaps/Secrets the case needs (created in the namespace first), `secret`
entries get the relay's owner key and DSN by the fault test (placeholders below).
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Body = dict[str, Any]
SPEC_FIELD = re.compile(r"\bspec(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*")


@dataclass(frozen=True)
class Case:
    id: str
    stage: str  # schema | accept | cluster
    field: str  # the refusal's message must contain this
    mutate: Callable[[Body], None]
    objects: tuple[Body, ...] = field(default=())
    # the first spec field the message names must be this one: where a refusal could name the
    # field at fault only in passing, after a wrong one (an image check blaming the task registry)
    first: bool = False

    def named_in(self, message: str) -> bool:
        """Whether `message` names this case's field (first of all, for a `first` case)."""
        if not self.first:
            return self.field in message
        found = SPEC_FIELD.search(message)
        return found is not None and found.group(0) == self.field

    def apply(self, good: Body, name: str) -> Body:
        body = copy.deepcopy(good)
        body["metadata"] = {"name": name}
        self.mutate(body)
        return body


def _spec(**values: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        body["spec"].update(values)
    return mutate


def _drop(*path: str) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        target = body["spec"]
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


def _set(*path: str, value: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        target = body["spec"]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _relay(**values: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        body["spec"]["relay"].update(values)
    return mutate


def _manifest(change: Callable[[Body], None]) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        change(body["spec"]["condition"]["inline"])
    return mutate


def _endpoints(change: Callable[[Body], None]) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        change(body["spec"]["endpoints"]["config"])
    return mutate


def _seat(**values: Any) -> Callable[[Body], None]:
    return _manifest(lambda m: m["roster"][0].update(values))


def _both(*mutations: Callable[[Body], None]) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        for change in mutations:
            change(body)
    return mutate


def config_map(name: str, data: dict[str, str]) -> Body:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def secret(name: str, data: dict[str, str]) -> Body:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": data}


WRONG_OWNER_HEX = "11" * 32  # a valid secret key that is not the relay's owner
# an nsec1 key (of WRONG_OWNER_HEX) whose checksum does not match
BAD_CHECKSUM_NSEC = "nsec1zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygsfy7x0p"
# shaped like a PEM private key (what the refusal looks for), spelled in two parts so that no
# scanner takes this file for one
FAKE_PRIVATE_KEY = "-----BEGIN " + "PRIVATE KEY-----\nbm90IGEga2V5\n-----END " + "PRIVATE KEY-----\n"
_ROOT = Path(__file__).resolve().parents[3]
SOLO_SHA = "b84317593f7eda24c8c455221d695e6d4049e1451188bcef2b8ffc7cdb383d12"
# The operator's environment every tier runs the corpus under: one path it must treat as an
# emptyDir of its pod (the chart sets BUZZ_EPHEMERAL_PATHS), so file:// storage there is refused.
EPHEMERAL_ROOT = "/run/buzz-operator-ephemeral"
OPERATOR_ENV = {"BUZZ_EPHEMERAL_PATHS": EPHEMERAL_ROOT}
# the S3 server hack/s3.sh runs for the tiers (its port as hack/lib.sh reads it)
S3_ENDPOINT = f"http://127.0.0.1:{os.environ.get('BUZZ_S3_PORT', '59000')}"


def _condition_yaml(price: str) -> dict[str, str]:
    """A condition ConfigMap's data: the oracle manifest with `price` as its input price (YAML can
    spell what JSON cannot, e.g. .inf), and its persona beside it."""
    manifest = (_ROOT / "manifests" / "standin-oracle.yaml").read_text()
    return {"manifest.yaml": manifest.replace("input_per_million_usd: 0.1", f"input_per_million_usd: {price}"),
            "personas__solo.md": (_ROOT / "manifests" / "personas" / "solo.md").read_text()}


CASES: tuple[Case, ...] = (
    # --- BuzzSweep fields the CRD schema refuses at admission
    Case("attempts-zero", "schema", "spec.attempts", _spec(attempts=0)),
    Case("attempts-too-many", "schema", "spec.attempts", _spec(attempts=1001)),
    Case("attempts-not-a-number", "schema", "spec.attempts", _spec(attempts="three")),
    Case("parallelism-zero", "schema", "spec.parallelism", _spec(parallelism=0)),
    Case("cpu-fraction-zero", "schema", "spec.cpuRequestFraction", _spec(cpuRequestFraction=0)),
    Case("cpu-fraction-above-one", "schema", "spec.cpuRequestFraction", _spec(cpuRequestFraction=1.5)),
    Case("timeout-multiplier-zero", "schema", "spec.timeoutMultiplier", _spec(timeoutMultiplier=0)),
    Case("pod-start-seconds-zero", "schema", "spec.podStartSeconds", _spec(podStartSeconds=0)),
    Case("pod-start-seconds-a-day-too-long", "schema", "spec.podStartSeconds", _spec(podStartSeconds=86401)),
    Case("setup-seconds-not-a-number", "schema", "spec.setupSeconds", _spec(setupSeconds="two minutes")),
    Case("resources-multiple-below-one", "schema", "spec.resources.limitMultiple", _spec(resources={"limitMultiple": 0.5})),
    Case("resources-multiple-with-units", "schema", "spec.resources.limitMultiple", _spec(resources={"limitMultiple": "3x"})),
    Case("resources-negative-fraction", "schema", "spec.resources.requestFraction", _spec(resources={"requestFraction": -0.5})),
    Case("resources-unlimited-and-a-multiple", "schema", "spec.resources.limitMultiple",
         _spec(resources={"unlimited": True, "limitMultiple": 2})),
    Case("runtime-class-not-a-dns-name", "schema", "spec.runtimeClassName", _spec(runtimeClassName="gVisor Sandbox")),
    Case("max-retries-negative", "schema", "spec.retry.maxRetries", _spec(retry={"maxRetries": -1})),
    Case("max-retries-too-many", "schema", "spec.retry.maxRetries", _spec(retry={"maxRetries": 21})),
    Case("backoff-negative", "schema", "spec.retry.backoffSeconds", _spec(retry={"backoffSeconds": -5})),
    Case("budget-zero", "schema", "spec.budget.maxCostUSD", _spec(budget={"maxCostUSD": 0})),
    Case("relay-url-http", "schema", "spec.relay.url", _set("relay", "url", value="http://relay:3600")),
    Case("relay-missing", "schema", "spec.relay", _drop("relay")),
    Case("relay-service-missing", "schema", "spec.relay.serviceRef", _drop("relay", "serviceRef")),
    # a loopback URL is carried by the pod's unprivileged forwarder, which cannot bind below 1024
    Case("relay-url-default-port", "schema", "spec.relay.url", _set("relay", "url", value="ws://localhost:80")),
    Case("relay-url-loopback-no-port", "schema", "spec.relay.url", _set("relay", "url", value="wss://localhost")),
    Case("relay-ca-bundle-two-sources", "schema", "spec.relay.caBundle",
         _relay(url="wss://localhost:3600", caBundle={"secretKeyRef": {"name": "relay-ca", "key": "ca.crt"},
                                                      "configMapKeyRef": {"name": "relay-ca", "key": "ca.crt"}})),
    Case("relay-ca-bundle-without-tls", "schema", "spec.relay.caBundle",
         _relay(caBundle={"configMapKeyRef": {"name": "relay-ca", "key": "ca.crt"}})),
    Case("relay-owner-key-empty", "schema", "spec.relay.ownerKeySecretRef.key",
         _set("relay", "ownerKeySecretRef", "key", value="")),
    Case("storage-url-ftp", "schema", "spec.storage.url", _set("storage", "url", value="ftp://bucket/x")),
    # issue 19: where a bundle with a leaked key goes must stay inside the sweep's store
    Case("storage-quarantine-prefix-traversal", "schema", "spec.storage.quarantinePrefix",
         _set("storage", "quarantinePrefix", value="quarantine/../../elsewhere")),
    Case("storage-quarantine-prefix-absolute", "schema", "spec.storage.quarantinePrefix",
         _set("storage", "quarantinePrefix", value="/quarantine")),
    Case("condition-missing", "schema", "spec.condition", _drop("condition")),
    Case("condition-two-sources", "schema", "spec.condition",
         _set("condition", "configMapRef", value={"name": "c"})),
    Case("condition-no-source", "schema", "spec.condition", _set("condition", value={})),
    Case("dataset-missing", "schema", "spec.dataset", _drop("dataset")),
    Case("dataset-two-sources", "schema", "spec.dataset",
         _set("dataset", value={"builtin": {}, "objectStore": {"prefix": "tasks"}})),
    Case("dataset-prefix-absolute", "schema", "spec.dataset.objectStore.prefix",
         _set("dataset", value={"objectStore": {"prefix": "/etc"}})),
    # refused by the CRD's CEL rules (x-kubernetes-validations; API servers from 1.25 on)
    Case("backoff-cap-below-base", "schema", "spec.retry",
         _spec(retry={"backoffSeconds": 60, "maxBackoffSeconds": 10})),
    Case("dataset-prefix-traversal", "schema", "spec.dataset.objectStore.prefix",
         _set("dataset", value={"objectStore": {"prefix": "tasks/../../etc"}})),
    Case("dataset-registry-no-source", "schema", "spec.dataset.registry",
         _set("dataset", value={"registry": {"name": "tb-mini@1.0"}})),
    Case("dataset-package-not-org-name", "schema", "spec.dataset.package.name",
         _set("dataset", value={"package": {"name": "just-a-name"}})),
    Case("pull-policy-unknown", "schema", "spec.imagePullPolicy", _spec(imagePullPolicy="Sometimes")),
    Case("ttl-negative", "schema", "spec.ttlSecondsAfterFinished", _spec(ttlSecondsAfterFinished=-1)),
    Case("include-not-a-list", "schema", "spec.include", _spec(include="hello-file")),
    Case("suspend-not-a-bool", "schema", "spec.suspend", _spec(suspend="maybe")),
    Case("stack-image-empty", "schema", "spec.stackImage", _spec(stackImage="")),
    Case("stack-and-stack-image", "schema", "spec.stackImage",
         _spec(stack={"image": "docker.io/buzz/stack:dev", "layout": "folder"}, stackImage="docker.io/buzz/stack:dev")),
    Case("stack-layout-unknown", "schema", "spec.stack.layout", _spec(stack={"image": "s:1", "layout": "tarball"})),
    Case("stack-layout-missing", "schema", "spec.stack.layout", _spec(stack={"image": "s:1"})),
    Case("stack-binary-path-on-folder", "schema", "spec.stack.binaryPath",
         _spec(stack={"image": "s:1", "layout": "folder", "binaryPath": "/usr/local/bin/sprig"})),
    Case("stack-binary-path-shell", "schema", "spec.stack.binaryPath",
         _spec(stack={"image": "s:1", "layout": "sprig", "binaryPath": "/bin/sprig; rm -rf /"})),
    # --- accepted by the schema, refused by the operator (pure: spec, manifest, endpoint config, dataset)
    Case("dataset-task-not-found", "accept", "spec.include", _spec(include=["no-such-task"])),
    Case("dataset-all-excluded", "accept", "spec.include", _spec(exclude=["*"])),
    # issue 19: file:// bundles where they do not outlive the operator's pod (OPERATOR_ENV below)
    Case("storage-file-on-ephemeral-volume", "accept", "spec.storage.url",
         _set("storage", "url", value=f"file://{EPHEMERAL_ROOT}/bundles")),
    Case("manifest-roster-missing", "accept", "roster", _manifest(lambda m: m.pop("roster"))),
    Case("manifest-unknown-key", "accept", "atempts", _manifest(lambda m: m.update(atempts=3))),
    Case("manifest-prompt-sha-wrong", "accept", "roster.0.prompt", _seat(prompt={"path": "personas/solo.md",
                                                                                "sha256": "0" * 64})),
    Case("manifest-prompt-file-missing", "accept", "roster.0.prompt",
         _seat(prompt={"path": "personas/nobody.md", "sha256": "0" * 64})),
    Case("manifest-prompt-sha-not-hex", "accept", "roster.0.prompt.sha256",
         _seat(prompt={"path": "personas/solo.md", "sha256": "xyz"})),
    Case("manifest-temperature", "accept", "roster.0.generation.temperature", _seat(generation={"temperature": 0.2})),
    Case("manifest-count-zero", "accept", "roster.0.count", _seat(count=0)),
    Case("manifest-kind-unknown", "accept", "roster.0.kind", _seat(kind="manager")),
    Case("manifest-no-orchestrator", "accept", "roster", _seat(kind="worker")),
    Case("manifest-seat-id-invalid", "accept", "roster.0.id", _seat(id="Solo Seat")),
    Case("manifest-price-missing", "accept", "prices", _manifest(lambda m: m.update(prices={}))),
    Case("manifest-timeout-negative", "accept", "trial_budget.timeout_seconds",
         _manifest(lambda m: m.update(trial_budget={"timeout_seconds": -1}))),
    Case("manifest-not-a-mapping", "accept", "spec.condition", _set("condition", "inline", value={"x": [1, 2]})),
    # found by tests/unit/validation/test_random_specs.py: the apiserver stores a NUL in a string
    Case("manifest-prompt-path-control-char", "accept", "roster.0.prompt.path",
         _seat(prompt={"path": "personas/solo.md\x00", "sha256": SOLO_SHA})),
    Case("endpoints-missing", "accept", "spec.endpoints", _drop("endpoints")),
    Case("endpoints-roster-endpoint-absent", "accept", "standin/oracle",
         _endpoints(lambda e: e.pop("standin/oracle"))),
    Case("endpoints-api-key-env-invalid", "accept", "api_key_env",
         _endpoints(lambda e: e["standin/oracle"].update(api_key_env="not an env name"))),
    Case("endpoints-entry-not-an-object", "accept", "standin/oracle",
         _endpoints(lambda e: e.update({"standin/oracle": "standin"}))),
    # --- refused once the cluster's objects are looked at
    Case("dataset-configmap-missing", "cluster", "spec.dataset.configMapRef",
         _set("dataset", value={"configMapRef": {"name": "no-such-tasks"}})),
    Case("dataset-object-store-empty", "cluster", "spec.dataset.objectStore.prefix",
         _set("dataset", value={"objectStore": {"prefix": "no-such-dataset"}})),
    # Harbor's dataset forms (docs/harbor.md): refused before any git server is dialled
    Case("dataset-registry-configmap-missing", "cluster", "spec.dataset.registry.configMapRef",
         _set("dataset", value={"registry": {"name": "tb-mini@1.0", "configMapRef": {"name": "no-such-registry"}}})),
    Case("dataset-registry-name-unknown", "cluster", "spec.dataset.registry.name",
         _set("dataset", value={"registry": {"name": "tb-mnii@1.0", "configMapRef": {"name": "registry-json"}}}),
         (config_map("registry-json", {"registry.json": '[{"name": "tb-mini", "version": "1.0", '
                                                          '"description": "", "tasks": []}]'}),)),
    Case("dataset-registry-url-unreachable", "cluster", "spec.dataset.registry.url",
         _set("dataset", value={"registry": {"name": "tb-mini", "url": "http://127.0.0.1:1/registry.json"}})),
    Case("dataset-package-hub-ref", "cluster", "spec.dataset.package.name",
         _set("dataset", value={"package": {"name": "harbor/tb-mini@sha256:00ff"}})),
    Case("condition-configmap-missing", "cluster", "spec.condition.configMapRef",
         _set("condition", value={"configMapRef": {"name": "no-such-condition"}})),
    Case("condition-configmap-no-manifest-key", "cluster", "spec.condition.configMapRef.manifestKey",
         _set("condition", value={"configMapRef": {"name": "bad-condition-keys"}}),
         (config_map("bad-condition-keys", {"other.yaml": "condition: x"}),)),
    Case("condition-configmap-not-yaml", "cluster", "spec.condition",
         _set("condition", value={"configMapRef": {"name": "bad-condition-yaml"}}),
         (config_map("bad-condition-yaml", {"manifest.yaml": "condition: [unclosed"}),)),
    Case("endpoints-configmap-missing", "cluster", "spec.endpoints.configMapRef",
         _set("endpoints", value={"configMapRef": {"name": "no-such-endpoints"}, "secretRef": {"name": "api-keys"}})),
    Case("endpoints-configmap-wrong-key", "cluster", "spec.endpoints.configMapRef.key",
         _set("endpoints", value={"configMapRef": {"name": "bad-endpoints-key"}, "secretRef": {"name": "api-keys"}}),
         (config_map("bad-endpoints-key", {"other.json": "{}"}),)),
    Case("endpoints-secret-missing", "cluster", "spec.endpoints.secretRef",
         _set("endpoints", "secretRef", value={"name": "no-such-api-keys"})),
    Case("endpoints-secret-key-missing", "cluster", "spec.endpoints.secretRef",
         _set("endpoints", "secretRef", value={"name": "api-keys-without-key"}),
         (secret("api-keys-without-key", {"OTHER_KEY": "x"}),)),
    Case("endpoints-secret-key-empty", "cluster", "spec.endpoints.secretRef",
         _set("endpoints", "secretRef", value={"name": "api-keys-empty"}),
         (secret("api-keys-empty", {"STANDIN_API_KEY": " "}),)),
    Case("relay-owner-secret-missing", "cluster", "spec.relay.ownerKeySecretRef",
         _set("relay", "ownerKeySecretRef", value={"name": "no-such-owner", "key": "owner-key"})),
    Case("relay-owner-secret-key-missing", "cluster", "spec.relay.ownerKeySecretRef.key",
         _set("relay", "ownerKeySecretRef", value={"name": "relay-owner", "key": "no-such-key"})),
    Case("relay-owner-key-wrong", "cluster", "spec.relay.ownerKeySecretRef",
         _set("relay", "ownerKeySecretRef", value={"name": "wrong-owner", "key": "owner-key"}),
         (secret("wrong-owner", {"owner-key": WRONG_OWNER_HEX}),)),
    # issue 24: these left the sweep with no status and no Event, the reconcile failing forever
    # the relay Service answers the handshake for localhost:3700 with 404: it is bound to localhost:3600
    Case("relay-url-other-host", "cluster", "spec.relay.url", _set("relay", "url", value="ws://localhost:3700")),
    Case("relay-owner-key-not-hex", "cluster", "spec.relay.ownerKeySecretRef",
         _set("relay", "ownerKeySecretRef", value={"name": "owner-not-hex", "key": "owner-key"}),
         (secret("owner-not-hex", {"owner-key": "not-a-hex-key"}),)),
    # the key and URL forms relay_target now checks (test_random_specs.py generates them too)
    Case("relay-owner-key-bad-nsec", "cluster", "spec.relay.ownerKeySecretRef",
         _set("relay", "ownerKeySecretRef", value={"name": "owner-bad-nsec", "key": "owner-key"}),
         (secret("owner-bad-nsec", {"owner-key": BAD_CHECKSUM_NSEC}),)),
    Case("relay-dsn-not-a-url", "cluster", "spec.relay.postgresDsnSecretRef",
         _set("relay", "postgresDsnSecretRef", value={"name": "dsn-malformed", "key": "dsn"}),
         (secret("dsn-malformed", {"dsn": "postgresql://relay:pw@[::1/relay"}),)),
    Case("relay-dsn-bad-sslmode", "cluster", "spec.relay.postgresDsnSecretRef",
         _set("relay", "postgresDsnSecretRef", value={"name": "dsn-sslmode", "key": "dsn"}),
         (secret("dsn-sslmode", {"dsn": "postgresql://relay:pw@127.0.0.1:1/relay?sslmode=on"}),)),
    Case("relay-url-port-out-of-range", "cluster", "spec.relay.url",
         _set("relay", "url", value="ws://localhost:99999")),
    # relay URLs that cannot work as written (docs/relay-urls.md), found when preflight dials them
    Case("relay-url-direct-unreachable", "cluster", "spec.relay.url",
         _both(_set("relay", "url", value="ws://relay.invalid:3600"), _drop("relay", "serviceRef"))),
    Case("relay-url-tls-not-served", "cluster", "spec.relay.url", _set("relay", "url", value="wss://localhost:3600")),
    Case("relay-ca-bundle-secret-missing", "cluster", "spec.relay.caBundle.secretKeyRef",
         _relay(url="wss://localhost:3600", caBundle={"secretKeyRef": {"name": "no-such-ca", "key": "ca.crt"}})),
    Case("relay-ca-bundle-key-missing", "cluster", "spec.relay.caBundle.configMapKeyRef.key",
         _relay(url="wss://localhost:3600", caBundle={"configMapKeyRef": {"name": "relay-ca-other-key", "key": "ca.crt"}}),
         (config_map("relay-ca-other-key", {"ca.pem": "x"}),)),
    Case("relay-ca-bundle-not-pem", "cluster", "spec.relay.caBundle.configMapKeyRef",
         _relay(url="wss://localhost:3600", caBundle={"configMapKeyRef": {"name": "relay-ca-garbage", "key": "ca.crt"}}),
         (config_map("relay-ca-garbage", {"ca.crt": "not a certificate\n"}),)),
    # a private key would be copied into every trial pod, where the agents read their CA file
    Case("relay-ca-bundle-private-key", "cluster", "spec.relay.caBundle.secretKeyRef",
         _relay(url="wss://localhost:3600", caBundle={"secretKeyRef": {"name": "relay-tls", "key": "tls.key"}}),
         (secret("relay-tls", {"tls.key": FAKE_PRIVATE_KEY}),)),
    # found by tests/unit/validation/test_random_specs.py
    Case("condition-configmap-price-infinite", "cluster", "input_per_million_usd",
         _set("condition", value={"configMapRef": {"name": "condition-inf"}}),
         (config_map("condition-inf", _condition_yaml(".inf")),)),
    Case("condition-configmap-tag-not-constructible", "cluster", "spec.condition",
         _set("condition", value={"configMapRef": {"name": "condition-bad-tag"}}),
         (config_map("condition-bad-tag", {"manifest.yaml": "condition: !!int abc\n"}),)),
    Case("condition-configmap-document-is-a-path", "cluster", "spec.condition",
         _set("condition", value={"configMapRef": {"name": "condition-path"}}),
         (config_map("condition-path", {"manifest.yaml": "/etc/hostname\n"}),)),
    Case("endpoints-configmap-tag-not-constructible", "cluster", "spec.endpoints",
         _set("endpoints", value={"configMapRef": {"name": "endpoints-bad-tag", "key": "endpoints.yaml"},
                                  "secretRef": {"name": "api-keys"}}),
         (config_map("endpoints-bad-tag", {"endpoints.yaml": "standin/oracle: {provider: !!float x}\n"}),)),
    Case("relay-service-missing-object", "cluster", "spec.relay.serviceRef",
         _set("relay", "serviceRef", value={"name": "no-such-relay", "port": 3600})),
    Case("relay-dsn-unreachable", "cluster", "spec.relay.postgresDsnSecretRef",
         _set("relay", "postgresDsnSecretRef", value={"name": "bad-dsn", "key": "dsn"}),
         (secret("bad-dsn", {"dsn": "postgresql://nobody:nothing@127.0.0.1:1/none"}),)),
    Case("stack-image-absent", "cluster", "spec.stackImage", _spec(stackImage="docker.io/buzz/no-such-stack:0"),
         first=True),
    Case("operator-image-absent", "cluster", "spec.operatorImage",
         _spec(operatorImage="docker.io/buzz/no-such-operator:0"), first=True),
    Case("task-registry-absent", "cluster", "spec.taskImageRegistry",
         _spec(taskImageRegistry="registry.invalid/none"), first=True),
    # the stand-in stack image is a folder: no sprig binary where the sprig layout looks for it
    Case("stack-sprig-layout-on-folder-image", "cluster", "spec.stack",
         _spec(stack={"image": "docker.io/buzz/stack:dev", "layout": "sprig"}), first=True),
    # the RuntimeClass admission plugin refuses the canary pod (HTTP 403)
    Case("runtime-class-missing", "cluster", "spec.runtimeClassName", _spec(runtimeClassName="no-such-runtime"),
         first=True),
    Case("storage-not-writable", "cluster", "spec.storage.url", _set("storage", "url", value="file:///proc/buzz")),
    Case("storage-credentials-secret-missing", "cluster", "spec.storage.credentialsSecretRef",
         _set("storage", value={"url": "s3://bucket/x", "credentialsSecretRef": {"name": "no-such-creds"}})),
    # the test S3 server (hack/s3.sh, versitygw) checks the signature: a wrong secret key is 403
    # SignatureDoesNotMatch from the server, before it looks for the bucket
    Case("storage-secret-key-wrong", "cluster", "spec.storage.credentialsSecretRef",
         _set("storage", value={"url": "s3://corpus-bucket/x", "endpoint": S3_ENDPOINT,
                                "credentialsSecretRef": {"name": "wrong-s3-creds"}}),
         (secret("wrong-s3-creds", {"AWS_ACCESS_KEY_ID": "buzz-test-access", "AWS_SECRET_ACCESS_KEY": "not-the-secret",
                                    "AWS_REGION": "us-east-1"}),), first=True),
)

STAGES = ("schema", "accept", "cluster")


@dataclass(frozen=True)
class ChartCase:
    """Chart values `helm install` must refuse, its message naming `field` (the value's path):
    by values.schema.json, or by a template's `fail` for values that only contradict each other."""

    id: str
    field: str
    values: Body


# tests/unit/chart/test_chart.py renders each with `helm template`
CHART_CASES: tuple[ChartCase, ...] = (
    # issue 19: bundles that would not outlive the operator's pod, or two answers to where they go
    ChartCase("bundles-ephemeral-with-existing-claim", "bundles.ephemeral",
              {"bundles": {"ephemeral": True, "existingClaim": "evidence"}}),
    ChartCase("bundles-ephemeral-with-chart-claim", "bundles.ephemeral",
              {"bundles": {"ephemeral": True, "claim": {"create": True}}}),
    ChartCase("bundles-two-claims", "bundles.existingClaim",
              {"bundles": {"existingClaim": "evidence", "claim": {"create": True}}}),
    ChartCase("bundles-claim-size-not-a-quantity", "bundles.claim.size", {"bundles": {"claim": {"size": "lots"}}}),
    ChartCase("bundles-ephemeral-not-a-bool", "bundles.ephemeral", {"bundles": {"ephemeral": "yes"}}),
    ChartCase("rbac-secret-namespace-invalid", "rbac.secretNamespaces", {"rbac": {"secretNamespaces": ["Team_A"]}}),
    ChartCase("rbac-cluster-wide-secrets-not-a-bool", "rbac.clusterWideSecrets",
              {"rbac": {"clusterWideSecrets": "please"}}),
    ChartCase("secret-findings-quarantine-absolute", "secretFindings.quarantinePrefix",
              {"secretFindings": {"quarantinePrefix": "/quarantine"}}),
    # issue 19 item 1: a trial policy that would block every model endpoint or every resolver
    ChartCase("trial-policy-no-endpoints", "trialNetworkPolicy.endpoints",
              {"trialNetworkPolicy": {"endpoints": []}}),
    ChartCase("trial-policy-dns-without-resolvers", "trialNetworkPolicy.dnsResolvers",
              {"trialNetworkPolicy": {"dnsResolvers": []}}),
    ChartCase("trial-policy-endpoint-cidr-and-selector", "trialNetworkPolicy.endpoints",
              {"trialNetworkPolicy": {"endpoints": [{"cidr": "10.0.0.0/8", "podSelector": {"app": "m"},
                                                     "ports": [443]}]}}),
    ChartCase("trial-policy-mirror-empty-selector", "trialNetworkPolicy.grading.mirrors",
              {"trialNetworkPolicy": {"grading": {"mirrors": [{"podSelector": {}, "ports": [8080]}]}}}),
)


def good_body(root: Any, *, store_url: str, tasks: tuple[str, ...] = ("hello-file",)) -> Body:
    """The valid sweep every case mutates: the stand-in oracle over builtin tasks, with the
    Secret and Service names the operator test fixtures create (relay-owner, api-keys, relay)."""
    import json

    import yaml

    manifest = yaml.safe_load((root / "manifests" / "standin-oracle.yaml").read_text())
    endpoints = json.loads((root / "manifests" / "endpoints" / "standin.json").read_text())
    return {
        "apiVersion": "bench.buzz.dev/v1alpha1", "kind": "BuzzSweep", "metadata": {"name": "good"},
        "spec": {
            "condition": {"inline": manifest},
            "endpoints": {"config": endpoints, "secretRef": {"name": "api-keys"}},
            "dataset": {"builtin": {}}, "include": list(tasks), "attempts": 1,
            "relay": {"url": "ws://localhost:3600", "serviceRef": {"name": "relay", "port": 3600},
                      "ownerKeySecretRef": {"name": "relay-owner", "key": "owner-key"},
                      "postgresDsnSecretRef": {"name": "relay-owner", "key": "postgres-dsn"}},
            "storage": {"url": store_url}, "imagePullPolicy": "Never",
        },
    }
