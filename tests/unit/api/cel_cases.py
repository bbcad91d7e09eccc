"""Objects that break, and objects that keep, each CEL rule of the CRDs (x-kubernetes-validations).

Shared by the unit tier (tests/unit/api/test_cel_rules.py: each sample evaluated with a real CEL
evaluator and against the rule's pydantic twin) and the integration tier
(tests/integration/operator/test_crd_cel.py: each sample sent to a real API server with
`kubectl apply --dry-run=server`). A sample changes a copy of its kind's valid object below; an
`update` sample changes an object already stored (the case of a transition rule, one that reads
oldSelf). Names the objects refer to need not exist: admission checks only their shape.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Body = dict[str, Any]
API_VERSION = "bench.buzz.dev/v1alpha1"


def sweep() -> Body:
    """A valid BuzzSweep with as few fields as the schema allows."""
    return {
        "apiVersion": API_VERSION, "kind": "BuzzSweep", "metadata": {"name": "cel"},
        "spec": {
            "condition": {"configMapRef": {"name": "standin-oracle"}},
            "dataset": {"builtin": {}},
            "relay": {"url": "ws://localhost:3600", "serviceRef": {"name": "relay", "port": 3600},
                      "ownerKeySecretRef": {"name": "relay-owner", "key": "owner-key"},
                      "postgresDsnSecretRef": {"name": "relay-owner", "key": "postgres-dsn"}},
        },
    }


def trial() -> Body:
    """A valid BuzzTrial as a sweep would plan it."""
    return {
        "apiVersion": API_VERSION, "kind": "BuzzTrial", "metadata": {"name": "cel"},
        "spec": {
            "sweepName": "cel", "task": "hello-file", "taskDigest": "a" * 64, "attempt": 1,
            "conditionHash": "b" * 64, "image": "docker.io/buzz-tasks/hello-file:1",
            "stack": {"image": "buzz-stack:dev", "layout": "folder"}, "operatorImage": "buzz-operator:dev",
            "resources": {"cpus": 1, "memoryMB": 1024},
            "deadlines": {"scheduleSeconds": 600, "setupSeconds": 120, "agentSeconds": 600, "agentSource": "task",
                          "collectSeconds": 300, "verifierSeconds": 600, "uploadSeconds": 300},
        },
    }


BASES: dict[str, Callable[[], Body]] = {"BuzzSweep": sweep, "BuzzTrial": trial}


@dataclass(frozen=True)
class Sample:
    id: str
    rule: str  # the rule it exercises, celeval.Rule.id: "<Kind>:<node path>[<index>]"
    refused: bool  # True: that rule refuses it; False: every rule lets it pass
    change: Callable[[Body], None]
    update: bool = False

    @property
    def kind(self) -> str:
        return self.rule.split(":", 1)[0]

    def stored(self, name: str) -> Body:
        """The object as created (for an update, the one already stored)."""
        body = BASES[self.kind]()
        body["metadata"]["name"] = name
        return body

    def body(self, name: str) -> Body:
        body = copy.deepcopy(self.stored(name))
        self.change(body)
        return body


def _set(*path: str, value: Any) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        target = body
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = copy.deepcopy(value)
    return change


def _prefix(prefix: str) -> Callable[[Body], None]:
    return _set("spec", "dataset", value={"objectStore": {"prefix": prefix}})


def _quarantine(prefix: str) -> Callable[[Body], None]:
    return _set("spec", "storage", value={"url": "s3://bundles", "quarantinePrefix": prefix})


CONDITION = "BuzzSweep:spec.condition[0]"
ENDPOINTS = "BuzzSweep:spec.endpoints[0]"
DATASET = "BuzzSweep:spec.dataset[0]"
REGISTRY = "BuzzSweep:spec.dataset.registry[0]"
PREFIX = "BuzzSweep:spec.dataset.objectStore.prefix[0]"
QUARANTINE = "BuzzSweep:spec.storage.quarantinePrefix[0]"
SWEEP_RETRY = "BuzzSweep:spec.retry[0]"
TRIAL_RETRY = "BuzzTrial:spec.retry[0]"
TRIAL_SPEC = "BuzzTrial:spec[0]"
SWEEP_STACK = "BuzzSweep:spec[0]"
SWEEP_REQUEST_FRACTION = "BuzzSweep:spec[1]"
SWEEP_HEADROOM = "BuzzSweep:spec.resources[0]"
SWEEP_STACK_LAYOUT = "BuzzSweep:spec.stack[0]"
TRIAL_STACK = "BuzzTrial:spec[1]"
TRIAL_STACK_LAYOUT = "BuzzTrial:spec.stack[0]"
FOLDER = {"image": "buzz-stack:dev", "layout": "folder"}
SPRIG = {"image": "buzz-sprig:dev", "layout": "sprig", "binaryPath": "/usr/local/bin/sprig"}


def _stack(**values: Any) -> Callable[[Body], None]:
    """spec.stack / spec.stackImage set to the values given, None removing one."""
    def change(body: Body) -> None:
        for key, value in values.items():
            if value is None:
                body["spec"].pop(key, None)
            else:
                body["spec"][key] = copy.deepcopy(value)
    return change


RELAY_SERVICE = "BuzzSweep:spec.relay[0]"
RELAY_CA_TLS = "BuzzSweep:spec.relay[1]"
RELAY_URL_PORT = "BuzzSweep:spec.relay.url[0]"
RELAY_CA_SOURCE = "BuzzSweep:spec.relay.caBundle[0]"
COMPARISON_SOURCE = "BuzzSweep:spec.comparison[0]"
COMPARISON_DIFFERENCE = "BuzzSweep:spec.comparison[1]"
CA_SECRET = {"secretKeyRef": {"name": "relay-ca", "key": "ca.crt"}}
CA_CONFIG_MAP = {"configMapKeyRef": {"name": "relay-ca", "key": "ca.crt"}}


def _relay(**values: Any) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        relay = body["spec"]["relay"]
        relay.update(copy.deepcopy(values))
        for key in [k for k, v in values.items() if v is None]:
            del relay[key]
    return change


def _url(url: str) -> Callable[[Body], None]:
    return _relay(url=url)

KEYS = {"name": "api-keys"}
ENDPOINT_CONFIG = {"standin/oracle": {"provider": "standin", "api_key_env": "STANDIN_API_KEY"}}

SAMPLES: tuple[Sample, ...] = (
    Sample("condition-no-source", CONDITION, True, _set("spec", "condition", value={})),
    Sample("condition-two-sources", CONDITION, True,
           _set("spec", "condition", value={"inline": {"condition": "x"}, "configMapRef": {"name": "c"}})),
    Sample("condition-inline", CONDITION, False, _set("spec", "condition", value={"inline": {"condition": "x"}})),
    Sample("condition-configmap", CONDITION, False, _set("spec", "condition", value={"configMapRef": {"name": "c"}})),
    Sample("endpoints-no-source", ENDPOINTS, True, _set("spec", "endpoints", value={"secretRef": KEYS})),
    Sample("endpoints-two-sources", ENDPOINTS, True, _set("spec", "endpoints", value={
        "config": ENDPOINT_CONFIG, "configMapRef": {"name": "endpoints"}, "secretRef": KEYS})),
    Sample("endpoints-config", ENDPOINTS, False,
           _set("spec", "endpoints", value={"config": ENDPOINT_CONFIG, "secretRef": KEYS})),
    Sample("endpoints-configmap", ENDPOINTS, False,
           _set("spec", "endpoints", value={"configMapRef": {"name": "endpoints"}, "secretRef": KEYS})),
    Sample("dataset-no-source", DATASET, True, _set("spec", "dataset", value={})),
    Sample("dataset-two-sources", DATASET, True,
           _set("spec", "dataset", value={"builtin": {}, "objectStore": {"prefix": "tasks"}})),
    Sample("dataset-three-sources", DATASET, True, _set("spec", "dataset", value={
        "builtin": {}, "configMapRef": {"name": "tasks"}, "objectStore": {"prefix": "tasks"}})),
    Sample("dataset-builtin", DATASET, False, _set("spec", "dataset", value={"builtin": {}})),
    Sample("dataset-configmap", DATASET, False, _set("spec", "dataset", value={"configMapRef": {"name": "tasks"}})),
    Sample("dataset-object-store", DATASET, False, _prefix("tasks/v1")),
    Sample("dataset-package", DATASET, False, _set("spec", "dataset", value={"package": {"name": "org/ds@v1"}})),
    Sample("registry-no-source", REGISTRY, True, _set("spec", "dataset", value={"registry": {"name": "tb@1"}})),
    Sample("registry-two-sources", REGISTRY, True, _set("spec", "dataset", value={"registry": {
        "name": "tb@1", "url": "https://r.example/registry.json", "configMapRef": {"name": "r"}}})),
    Sample("registry-url", REGISTRY, False, _set("spec", "dataset", value={"registry": {
        "name": "tb@1", "url": "https://r.example/registry.json"}})),
    Sample("registry-configmap", REGISTRY, False, _set("spec", "dataset", value={"registry": {
        "name": "tb", "configMapRef": {"name": "r"}}})),
    Sample("prefix-parent-inside", PREFIX, True, _prefix("tasks/../../etc")),
    Sample("prefix-parent-alone", PREFIX, True, _prefix("..")),
    Sample("prefix-parent-first", PREFIX, True, _prefix("../etc")),
    Sample("prefix-parent-last", PREFIX, True, _prefix("tasks/..")),
    Sample("prefix-dots-in-names", PREFIX, False, _prefix("tasks/..hidden/v1..2/.../x.")),
    Sample("quarantine-parent-inside", QUARANTINE, True, _quarantine("quarantine/../../elsewhere")),
    Sample("quarantine-parent-alone", QUARANTINE, True, _quarantine("..")),
    Sample("quarantine-empty-segment", QUARANTINE, True, _quarantine("quarantine//secrets")),
    Sample("quarantine-nested", QUARANTINE, False, _quarantine("restricted/quarantine")),
    Sample("quarantine-off", QUARANTINE, False, _quarantine("")),
    Sample("retry-cap-below-base", SWEEP_RETRY, True,
           _set("spec", "retry", value={"backoffSeconds": 60, "maxBackoffSeconds": 10})),
    # the default cap (300) is filled in before the rule runs, and is below this base
    Sample("retry-base-above-default-cap", SWEEP_RETRY, True, _set("spec", "retry", value={"backoffSeconds": 600})),
    Sample("retry-cap-equals-base", SWEEP_RETRY, False,
           _set("spec", "retry", value={"backoffSeconds": 60, "maxBackoffSeconds": 60})),
    Sample("retry-defaults", SWEEP_RETRY, False, _set("spec", "retry", value={})),
    Sample("trial-retry-cap-below-base", TRIAL_RETRY, True,
           _set("spec", "retry", value={"backoffSeconds": 60, "maxBackoffSeconds": 10})),
    Sample("trial-retry-defaults", TRIAL_RETRY, False, _set("spec", "retry", value={})),
    Sample("trial-image-edited", TRIAL_SPEC, True, _set("spec", "image", value="docker.io/other/image:2"), update=True),
    Sample("trial-retry-edited", TRIAL_SPEC, True, _set("spec", "retry", "maxRetries", value=5), update=True),
    Sample("trial-labels-edited", TRIAL_SPEC, False, _set("metadata", "labels", value={"team": "x"}), update=True),
    # spec.stack and its deprecated alias spec.stackImage (api/stack.py)
    Sample("sweep-stack-and-stack-image", SWEEP_STACK, True, _stack(stack=FOLDER, stackImage="buzz-stack:dev")),
    Sample("sweep-stack", SWEEP_STACK, False, _stack(stack=SPRIG)),
    Sample("sweep-stack-image", SWEEP_STACK, False, _stack(stackImage="buzz-stack:dev")),
    Sample("sweep-binary-path-on-folder", SWEEP_STACK_LAYOUT, True,
           _stack(stack={**FOLDER, "binaryPath": "/usr/local/bin/sprig"})),
    Sample("sweep-folder-stack", SWEEP_STACK_LAYOUT, False, _stack(stack=FOLDER)),
    Sample("trial-stack-and-stack-image", TRIAL_STACK, True, _stack(stackImage="buzz-stack:dev")),
    Sample("trial-no-stack", TRIAL_STACK, True, _stack(stack=None)),
    Sample("trial-planned-with-stack-image", TRIAL_STACK, False, _stack(stack=None, stackImage="buzz-stack:dev")),
    Sample("trial-binary-path-on-folder", TRIAL_STACK_LAYOUT, True,
           _stack(stack={**FOLDER, "binaryPath": "/usr/local/bin/sprig"})),
    Sample("trial-sprig-stack", TRIAL_STACK_LAYOUT, False, _stack(stack=SPRIG)),
    # headroom (docs/resources.md#headroom): one limit, one request fraction
    Sample("sweep-unlimited-and-a-multiple", SWEEP_HEADROOM, True,
           _set("spec", "resources", value={"unlimited": True, "limitMultiple": 3})),
    Sample("sweep-unlimited", SWEEP_HEADROOM, False, _set("spec", "resources", value={"unlimited": True})),
    Sample("sweep-three-times", SWEEP_HEADROOM, False, _set("spec", "resources", value={"limitMultiple": 3})),
    Sample("sweep-two-request-fractions", SWEEP_REQUEST_FRACTION, True,
           _stack(resources={"requestFraction": 0.5}, cpuRequestFraction=0.5)),
    Sample("sweep-request-fraction", SWEEP_REQUEST_FRACTION, False, _stack(resources={"requestFraction": 0.5})),
    Sample("sweep-request-fraction-beside-the-default", SWEEP_REQUEST_FRACTION, False,
           _stack(resources={"requestFraction": 0.5}, cpuRequestFraction=1.0)),
    # relay URLs (api/relay.py): a loopback one needs serviceRef and a port the forwarder can bind
    Sample("relay-loopback-without-service", RELAY_SERVICE, True, _relay(serviceRef=None)),
    Sample("relay-ipv4-loopback-without-service", RELAY_SERVICE, True, _relay(url="ws://127.0.0.1:3600",
                                                                                 serviceRef=None)),
    Sample("relay-ipv6-loopback-without-service", RELAY_SERVICE, True, _relay(url="ws://[::1]:3600",
                                                                                 serviceRef=None)),
    Sample("relay-direct-without-service", RELAY_SERVICE, False, _relay(url="ws://relay.example.com:3600",
                                                                          serviceRef=None)),
    Sample("relay-direct-ip-without-service", RELAY_SERVICE, False, _relay(url="wss://10.96.0.20", serviceRef=None)),
    Sample("relay-loopback-default-port", RELAY_URL_PORT, True, _url("ws://localhost")),
    Sample("relay-loopback-port-80", RELAY_URL_PORT, True, _url("ws://localhost:80/")),
    Sample("relay-loopback-port-1023", RELAY_URL_PORT, True, _url("wss://127.0.0.1:1023")),
    Sample("relay-loopback-tls-default-port", RELAY_URL_PORT, True, _url("wss://LOCALHOST")),
    Sample("relay-loopback-empty-port", RELAY_URL_PORT, True, _url("ws://[::1]:")),
    Sample("relay-loopback-port-1024", RELAY_URL_PORT, False, _url("ws://localhost:1024")),
    Sample("relay-loopback-port-leading-zero", RELAY_URL_PORT, False, _url("ws://127.0.0.9:03600/path")),
    Sample("relay-loopback-userinfo", RELAY_URL_PORT, True, _url("ws://a@b@localhost:443")),
    Sample("relay-direct-port-80", RELAY_URL_PORT, False, _url("ws://relay.example.com:80")),
    Sample("relay-direct-lookalike-host", RELAY_URL_PORT, False, _url("ws://localhost.example.com")),
    # a CA bundle: exactly one source, and only for wss://
    Sample("relay-ca-two-sources", RELAY_CA_SOURCE, True,
           _relay(url="wss://localhost:3600", caBundle={**CA_SECRET, **CA_CONFIG_MAP})),
    Sample("relay-ca-no-source", RELAY_CA_SOURCE, True, _relay(url="wss://localhost:3600", caBundle={})),
    Sample("relay-ca-secret", RELAY_CA_SOURCE, False, _relay(url="wss://localhost:3600", caBundle=CA_SECRET)),
    Sample("relay-ca-config-map", RELAY_CA_SOURCE, False,
           _relay(url="wss://relay.example.com", serviceRef=None, caBundle=CA_CONFIG_MAP)),
    Sample("relay-ca-on-ws", RELAY_CA_TLS, True, _relay(caBundle=CA_SECRET)),
    Sample("relay-ca-on-direct-ws", RELAY_CA_TLS, True,
           _relay(url="ws://relay.example.com", serviceRef=None, caBundle=CA_CONFIG_MAP)),
    Sample("relay-ca-on-wss", RELAY_CA_TLS, False, _relay(url="wss://relay.example.com:8443", caBundle=CA_SECRET)),
    # the comparison a sweep is for: one source of the baseline's rates, a difference that is not 0
    Sample("comparison-no-source", COMPARISON_SOURCE, True, _set("spec", "comparison", value={"difference": 0.1})),
    Sample("comparison-two-sources", COMPARISON_SOURCE, True,
           _set("spec", "comparison", value={"baseline": "pilot", "passRate": 0.5, "difference": 0.1})),
    Sample("comparison-baseline", COMPARISON_SOURCE, False,
           _set("spec", "comparison", value={"baseline": "pilot", "difference": -0.1})),
    Sample("comparison-zero", COMPARISON_DIFFERENCE, True,
           _set("spec", "comparison", value={"passRate": 0.5, "difference": 0.0})),
    Sample("comparison-assumed", COMPARISON_DIFFERENCE, False,
           _set("spec", "comparison", value={"passRate": 0.5, "difference": 0.2})),
)
