"""The chart on the local stack, as a user would run it: `helm install` into a fresh namespace
with the dev relay (Postgres on the host, reached by DSN: the local stack has no postgres image
and no cluster DNS), a sample oracle sweep through the in-cluster operator, `helm upgrade`
with a changed value while a trial runs, metrics and Events checked against the status, RBAC
checked against every API request the operator made, and `helm uninstall` leaving nothing.

One module-scoped run (a sweep costs tens of seconds); the tests then read what it recorded.
NetworkPolicy: the local stack's bridge CNI enforces none (test_network_policy.py probes it),
so the trial policy is checked as rendered (tests/unit/chart) and as accepted by the apiserver.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.chart.conftest import (
    CHART,
    apply,
    condition_objects,
    kubectl,
    kubectl_json,
    sample_sweep,
)
from tests.support.hungry_tasks import slow_tasks
from tests.unit.chart.chartlib import granted, render, restricted_violations, selects

SWEEP = "chart-oracle"
# hello-file whose answer takes SLOW_S: the trial still runs when the rolling upgrade has made a new
# pod the leader (a new pod Ready before each old one stops, about 30-50 s here), so the new leader
# resumes it; hello-file itself ends within the rollout, under the old leader
SLOW_S = 75
TASKS = ["slow-1"]
# long enough to outlast the rolling upgrade (a new pod Ready before each old one stops), which the
# one-trial sweep may finish within, before the test reads the completed sweep
TTL_S = 90
# Granted but not exercised on Kubernetes 1.20: from 1.30 on (KEP-4006) exec over websockets is
# authorized as `create` on pods/exec, where 1.20 authorizes the same request as `get`.
# `delete` on buzztrials is spec.rerun's (tests/integration/operator/test_resume_rerun.py), which
# the chart's sample sweep does not ask for.
UNEXERCISED = {("", "pods/exec", "create"), ("bench.buzz.dev", "buzztrials", "delete"),
               # granted for a Lease deleted by hand; the chart makes it (docs/leadership.md)
               ("coordination.k8s.io", "leases", "create")}
# read only for a trial pod still waiting on its node after kube/pods.py's REPORT_AFTER_S (the image
# it pulls, for status.waiting), which a pod of local images may or may not be
MAYBE_EXERCISED = {("", "events", "list"),
                   # the nodes a sweep's images are pulled ahead onto: listed only by a sweep that
                   # does not pull with Never (docs/registry.md#images-pulled-ahead)
                   ("", "nodes", "list")}
# what kopf needs on a cluster-wide install instead of namespaces list/watch: nothing extra
# a trial's Events: its start and its finish (failures too, none here); the phases between are
# status and metrics only (observability/events.py)
PHASES = ["Admitted", "Succeeded"]
BETWEEN = {"Provisioning", "Launching", "Running", "Collecting", "Grading", "Bundling"}

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@dataclass
class Run:
    namespace: str
    release: str
    fullname: str
    install_out: str = ""
    secrets: list[str] = field(default_factory=list)
    operator_pods: list[dict[str, Any]] = field(default_factory=list)
    trial_pod: dict[str, Any] | None = None
    upgraded_during: str = ""
    sweep: dict[str, Any] = field(default_factory=dict)
    trials: list[dict[str, Any]] = field(default_factory=list)
    metrics_at_complete: Samples = field(default_factory=dict)
    api_calls: dict[tuple[str, str, str, str], float] = field(default_factory=dict)
    resumed_patches: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)
    sweep_events: list[dict[str, Any]] = field(default_factory=list)
    rendered: list[dict[str, Any]] = field(default_factory=list)
    logs: str = ""
    relay_keys_kept: bool = False
    values: list[str] = field(default_factory=list)
    graded_pods: list[str] = field(default_factory=list)  # pods seen labelled phase=grading
    replicas: list[dict[str, Any]] = field(default_factory=list)  # the operator pods after the upgrade


def wait_for(predicate, timeout_s: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


def scrape(namespace: str, release: str) -> Samples:
    """/metrics of the leading replica, at its pod IP (the metrics Service would also pick the
    standby, which runs no handler and counts no trial)."""
    leader = wait_for(lambda: operator_pod(namespace, release), 60, "the leading operator pod")
    ip = leader["status"]["podIP"]
    last: Exception | None = None
    for _ in range(30):
        try:
            with urllib.request.urlopen(f"http://{ip}:9090/metrics", timeout=5) as response:
                text = response.read().decode()
            break
        except OSError as error:  # the Service's endpoints follow the pod's readiness
            last = error
            time.sleep(1)
    else:
        raise AssertionError(f"metrics of {release} not reachable: {last}")
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def api_calls(samples: Samples) -> dict[tuple[str, str, str, str], float]:
    calls = {}
    for (name, labels), value in samples.items():
        if name == "buzz_kube_api_requests_total":
            d = dict(labels)
            group = "" if d["group"] == "core" else d["group"]
            calls[(group, d["resource"], d["verb"], d["code"])] = value
    return calls


def merge(a: dict[Any, float], b: dict[Any, float]) -> dict[Any, float]:
    return {k: a.get(k, 0.0) + b.get(k, 0.0) for k in a.keys() | b.keys()}


def operator_pod(namespace: str, release: str) -> dict[str, Any] | None:
    """The leading replica (docs/leadership.md): the Ready operator pod the Lease names."""
    selector = f"app.kubernetes.io/instance={release},app.kubernetes.io/component=operator"
    lease = kubectl_json("-n", namespace, "get", "lease", f"{release}-buzz-operator")
    holder = (lease.get("spec") or {}).get("holderIdentity")
    pods = kubectl_json("-n", namespace, "get", "pods", "-l", selector)["items"]
    ready = [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
    ]
    return next((p for p in ready if p["metadata"]["name"] == holder), None)


def operator_pods(namespace: str, release: str) -> list[dict[str, Any]]:
    selector = f"app.kubernetes.io/instance={release},app.kubernetes.io/component=operator"
    return kubectl_json("-n", namespace, "get", "pods", "-l", selector)["items"]


def helm_cmd(helm: Path, *args: str) -> str:
    done = subprocess.run(
        [str(helm), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, env={**os.environ}
    )
    assert done.returncode == 0, f"helm {' '.join(args)}: {done.stdout}\n{done.stderr}"
    return done.stdout


def complete(sweep: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Complete" and c["status"] == "True"
        for c in (sweep.get("status") or {}).get("conditions", [])
    )


@pytest.fixture(scope="module")
def run(helm: Path, chart_namespace: str, relay_dsn: str, crds: None) -> Iterator[Run]:
    ns = chart_namespace
    release = f"bz{secrets.token_hex(3)}"
    r = Run(namespace=ns, release=release, fullname=f"{release}-buzz-operator")
    api_key = f"standin-{secrets.token_hex(16)}"
    apply(ns, *condition_objects(api_key))
    r.values = [
        "--set",
        "devRelay.enabled=true",
        "--set-string",
        f"devRelay.databaseURL={relay_dsn}",
        "--set",
        "operator.sweepIntervalSeconds=2",
        "--set",
        "operator.janitorIntervalSeconds=5",  # the janitor's list calls are exercised too
        "--set",
        "image.pullPolicy=Never",
        # the sample sweep keeps its file:// bundles on the operator pod's emptyDir: lost with the
        # pod, which a test accepts and a real install must say so (without it they are refused)
        "--set",
        "bundles.ephemeral=true",
    ]
    r.rendered = render(
        release=release,
        namespace=ns,
        values={"devRelay": {"enabled": True, "databaseURL": relay_dsn}, "bundles": {"ephemeral": True}},
    )
    r.install_out = helm_cmd(
        helm, "install", release, str(CHART), "-n", ns, *r.values, "--wait", "--timeout", "180s"
    )
    relay_secret = kubectl_json("-n", ns, "get", "secret", f"{r.fullname}-dev-relay")["data"]
    import base64

    r.secrets = [api_key, *(base64.b64decode(v).decode() for v in relay_secret.values())]
    first = wait_for(lambda: operator_pod(ns, release), 120, "the operator pod to be Ready")
    r.operator_pods.append(first)

    # every pod that comes to carry the grading phase's label (a label-selector watch reports a pod
    # when it starts matching): the canary and the trial pod, relabelled by the operator
    watcher = subprocess.Popen(
        ["kubectl", "-n", ns, "get", "pods", "--watch", "-o", "name", "-l",
         "app.kubernetes.io/component=trial-pod,bench.buzz.dev/phase=grading"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    subprocess.run(["kubectl", "-n", ns, "create", "configmap", "chart-tasks",
                    *(f"--from-literal={k}={v}" for k, v in slow_tasks(1, SLOW_S).items())],
                   check=True, capture_output=True)
    sweep = sample_sweep(SWEEP, r.fullname, tasks=TASKS, ttl_s=TTL_S)
    sweep["spec"]["dataset"] = {"configMapRef": {"name": "chart-tasks"}}
    apply(ns, sweep)

    def trial_in_flight() -> tuple[dict[str, Any], dict[str, Any]] | None:
        # launching: its pod exists while the status may still say Pending (entering
        # Provisioning and Launching rides on the next write, docs/corridor.md#writes-that-wait)
        for t in kubectl_json("-n", ns, "get", "buzztrials")["items"]:
            status = t.get("status") or {}
            if status.get("phase", "Pending") in ("Pending", "Provisioning", "Launching", "Running"):
                pod = status.get("pod") or t["metadata"]["name"]  # a first try's pod bears the trial's name
                found = kubectl_json("-n", ns, "get", "pods", "--field-selector", f"metadata.name={pod}")["items"]
                if found:
                    return t, found[0]
        return None

    trial, r.trial_pod = wait_for(trial_in_flight, 240, "a trial launching or running")
    before = scrape(ns, release)
    r.upgraded_during = (trial.get("status") or {}).get("phase", "Pending")
    relay_keys = kubectl_json("-n", ns, "get", "secret", f"{r.fullname}-dev-relay")["data"]
    # a changed value while the trial runs: the rolled pods take over from the leader, which releases the Lease
    helm_cmd(
        helm,
        "upgrade",
        release,
        str(CHART),
        "-n",
        ns,
        *r.values,
        "--set",
        "operator.sweepIntervalSeconds=3",
        "--wait",
        "--timeout",
        "180s",
    )
    def upgraded_leader() -> dict[str, Any] | None:
        # the rolled pods lead once the old leader released the Lease (the other old pod may lead
        # in between, until the rollout stops it too)
        pod = operator_pod(ns, release)
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]} if pod else {}
        return pod if pod and env.get("BUZZ_SWEEP_INTERVAL_S") == "3" else None

    second = wait_for(upgraded_leader, 120, "the upgraded operator pod to lead")
    r.replicas = operator_pods(ns, release)
    r.operator_pods.append(second)
    r.relay_keys_kept = (
        relay_keys == kubectl_json("-n", ns, "get", "secret", f"{r.fullname}-dev-relay")["data"]
    )

    def finished() -> dict[str, Any] | None:
        sweep = kubectl_json("-n", ns, "get", "buzzsweep", SWEEP)
        return sweep if complete(sweep) else None

    r.sweep = wait_for(finished, 300, "the sweep to complete")
    watcher.terminate()
    r.graded_pods = sorted({line.strip().removeprefix("pod/") for line in watcher.communicate(timeout=30)[0].splitlines()
                            if line.strip()})
    r.trials = kubectl_json("-n", ns, "get", "buzztrials")["items"]
    time.sleep(4)  # one more sweep tick so the gauges hold the final status
    r.metrics_at_complete = scrape(ns, release)
    r.logs = kubectl("-n", ns, "logs", second["metadata"]["name"])
    r.events = [
        e
        for e in kubectl_json("-n", ns, "get", "events")["items"]
        if e["involvedObject"].get("kind") == "BuzzTrial"
    ]
    r.sweep_events = [
        e
        for e in kubectl_json("-n", ns, "get", "events")["items"]
        if e["involvedObject"].get("kind") == "BuzzSweep"
    ]
    # ttlSecondsAfterFinished deletes the sweep; its trials follow (their finalizer released)
    wait_for(
        lambda: not kubectl("-n", ns, "get", "buzzsweeps,buzztrials", "-o", "name").strip(),
        TTL_S + 120,
        "the finished sweep and its trials to be deleted by their TTL",
    )
    time.sleep(2)
    after = scrape(ns, release)
    r.resumed_patches = sum(
        v
        for (g, res, verb, _), v in api_calls(after).items()
        if (res, verb) == ("buzztrials/status", "patch")
    )
    r.api_calls = merge(api_calls(before), api_calls(after))
    yield r
    # test_uninstall_leaves_nothing_behind uninstalls; after a failure earlier, do it here (the
    # ClusterRole/Binding would outlive the namespace)
    subprocess.run(
        [str(helm), "uninstall", release, "-n", ns, "--ignore-not-found", "--wait"], capture_output=True
    )
    kubectl(
        "delete",
        "clusterroles,clusterrolebindings",
        "-l",
        f"app.kubernetes.io/instance={release}",
        check=False,
    )


def test_install_prints_notes_naming_the_relay_refs(run: Run) -> None:
    assert "Submit a first sweep" in run.install_out
    assert f"ownerKeySecretRef: {{name: {run.fullname}-dev-relay, key: owner-key}}" in run.install_out


def test_sample_sweep_completes_through_the_in_cluster_operator(run: Run) -> None:
    status = run.sweep["status"]
    assert (status["total"], status["succeeded"]) == (len(TASKS), len(TASKS)), status
    assert status.get("meanReward") == 1.0
    assert [t["status"]["phase"] for t in run.trials] == ["Succeeded"] * len(TASKS)
    assert all(
        t["status"]["bundleURL"].startswith("file:///var/lib/buzz-operator/bundles/") for t in run.trials
    )


def test_two_replicas_run_and_one_leads(run: Run) -> None:
    """docs/leadership.md: the chart's two replicas, one holding the Lease, both Ready (the standby
    answers its liveness probe without running kopf)."""
    live = [p for p in run.replicas if not p["metadata"].get("deletionTimestamp")]
    assert len(live) == 2, [p["metadata"]["name"] for p in run.replicas]
    leader = run.operator_pods[-1]["metadata"]["name"]
    assert leader in {p["metadata"]["name"] for p in live}
    budget = kubectl_json("-n", run.namespace, "get", "pdb", run.fullname)
    assert budget["spec"]["minAvailable"] == 1


def test_upgrade_rolled_the_operator_and_the_running_trial_went_on(run: Run) -> None:
    old, new = run.operator_pods
    assert old["metadata"]["uid"] != new["metadata"]["uid"]
    env = {e["name"]: e.get("value") for e in new["spec"]["containers"][0]["env"]}
    assert env["BUZZ_SWEEP_INTERVAL_S"] == "3"
    assert run.upgraded_during in ("Pending", "Provisioning", "Launching", "Running")
    assert run.relay_keys_kept  # the chart's generated keys survive an upgrade (lookup)
    # the new operator wrote the trial's later phases: it resumed the trial, nothing restarted it
    assert run.resumed_patches > 0
    [trial] = run.trials
    assert trial["status"].get("retries", 0) == 0 and not trial["status"].get("failedTries")


def test_metrics_show_what_the_sweep_status_shows(run: Run) -> None:
    m, status = run.metrics_at_complete, run.sweep["status"]
    key = (("namespace", run.namespace), ("sweep", SWEEP))

    def gauge(name: str, **labels: str) -> float:
        return m[(name, tuple(sorted((*key, *labels.items()))))]

    for state in ("pending", "running", "succeeded", "failed", "broken", "total"):
        assert gauge("buzz_sweep_trials", state=state) == status.get(state, 0), state
    for bound in ("floor", "ceiling"):
        assert gauge("buzz_sweep_cost_usd", bound=bound) == pytest.approx(status["costUSD"][bound])
    assert gauge("buzz_trials", state="succeeded", outcome="ok") == status["succeeded"]
    tokens = {
        d: sum(
            v for (n, labels), v in m.items() if n == "buzz_trial_tokens" and dict(labels)["direction"] == d
        )
        for d in ("input", "output")
    }
    assert tokens == {d: sum(t["status"]["tokens"][d] for t in run.trials) for d in ("input", "output")}
    assert tokens["input"] > 0
    cost = sum(
        v for (n, labels), v in m.items() if n == "buzz_trial_cost_usd" and dict(labels)["bound"] == "floor"
    )
    assert cost == pytest.approx(status["costUSD"]["floor"])
    durations = {
        dict(labels)["phase"]
        for (n, labels), v in m.items()
        if n == "buzz_trial_phase_duration_seconds_count" and v > 0
    }
    # the new operator timed the phases that ended after it took over: at least the last one (how
    # many more depends on how far the old operator got while it stopped)
    assert "Bundling" in durations, durations


def test_events_tell_one_trials_story_without_secrets(run: Run) -> None:
    [trial] = run.trials
    mine = sorted(
        (e for e in run.events if e["involvedObject"]["name"] == trial["metadata"]["name"]),
        key=lambda e: (
            e.get("firstTimestamp") or e.get("eventTime") or "",
            e["metadata"]["creationTimestamp"],
        ),
    )
    reasons = [e["reason"] for e in mine]
    assert set(PHASES) <= set(reasons) and not BETWEEN & set(reasons), reasons
    # Event times have one-second resolution: the story's order holds up to ties
    first: dict[str, str] = {}
    for e in mine:
        first.setdefault(e["reason"], e.get("firstTimestamp") or e["metadata"]["creationTimestamp"])
    stamps = [first[p] for p in PHASES]
    assert stamps == sorted(stamps), list(zip(PHASES, stamps, strict=True))
    [done] = [e for e in mine if e["reason"] == "Succeeded"]
    assert trial["status"]["bundleURL"] in done["message"] and "reward 1" in done["message"]
    text = " ".join(e["message"] for e in [*run.events, *run.sweep_events])
    assert not [s[:6] for s in run.secrets if s and s in text]
    assert {"SpecValid", "AllTrialsFinished"} <= {e["reason"] for e in run.sweep_events}


def test_logs_are_json_lines_naming_sweep_and_trial_without_secrets(run: Run) -> None:
    import json

    lines = [json.loads(line) for line in run.logs.splitlines() if line.strip()]
    assert lines and all(line.get("message") is not None and line.get("severity") for line in lines)
    [trial] = run.trials
    assert any(
        line.get("trial") == trial["metadata"]["name"] and line.get("sweep") == SWEEP for line in lines
    )
    assert any(line.get("sweep") == SWEEP and "trial" not in line for line in lines)
    assert not [s[:6] for s in run.secrets if s and s in run.logs]


def test_rbac_every_call_was_allowed_and_every_grant_was_used(run: Run) -> None:
    refused = {k: v for k, v in run.api_calls.items() if k[3] in ("401", "403")}
    assert not refused, refused
    used = {(g, res, verb) for g, res, verb, code in run.api_calls if code != "error"}
    grants = granted(run.rendered)
    assert used - grants == set(), f"calls the chart does not grant: {used - grants}"
    assert grants - used - MAYBE_EXERCISED == UNEXERCISED, f"grants never used: {grants - used - UNEXERCISED}"


def test_operator_pod_passes_the_restricted_profile_as_admitted(run: Run) -> None:
    for pod in run.operator_pods:
        assert restricted_violations(pod["spec"]) == [], pod["metadata"]["name"]


def test_trial_pod_has_no_token_privilege_or_host_access(run: Run) -> None:
    assert run.trial_pod is not None
    spec = run.trial_pod["spec"]
    assert spec.get("automountServiceAccountToken") is False
    assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))
    assert not [v for v in spec.get("volumes", []) if "hostPath" in v]
    assert not [
        m for c in spec["containers"] for m in c.get("volumeMounts", []) if "serviceaccount" in m["mountPath"]
    ]
    containers = [*spec.get("initContainers", []), *spec["containers"]]
    assert not [c["name"] for c in containers if (c.get("securityContext") or {}).get("privileged")]
    # everything but the task container (untrusted images often need root: baseline) is restricted
    for c in containers:
        if c["name"] != "task":
            alone = {"securityContext": spec.get("securityContext"), "containers": [c]}
            assert restricted_violations(alone) == [], c["name"]
    # caught Launching or Running: the agents phase, so the agents policy selects it and no grading one
    labels = run.trial_pod["metadata"]["labels"]
    assert labels["bench.buzz.dev/phase"] == "agents", labels
    policies = {d["metadata"]["name"]: d for d in run.rendered if d["kind"] == "NetworkPolicy"}
    selecting = {name for name, policy in policies.items() if selects(policy, labels)}
    assert selecting == {f"{run.fullname}-trials"}, selecting


def test_the_canary_and_the_trial_pod_were_relabelled_for_grading(run: Run) -> None:
    """docs/egress.md: the operator in the cluster switched both to the grading phase (with the
    chart's RBAC), the canary in preflight and the trial's pod once its agents stopped."""
    assert run.trial_pod is not None
    assert f"{SWEEP}-preflight" in run.graded_pods, run.graded_pods
    assert run.trial_pod["metadata"]["name"] in run.graded_pods, run.graded_pods


def test_uninstall_leaves_nothing_behind(run: Run, helm: Path) -> None:
    ns, release = run.namespace, run.release
    helm_cmd(helm, "uninstall", release, "-n", ns, "--wait", "--timeout", "120s")
    selector = f"app.kubernetes.io/instance={release}"

    def leftovers() -> str:
        namespaced = kubectl(
            "-n",
            ns,
            "get",
            "deploy,rs,pods,svc,endpoints,secrets,configmaps,serviceaccounts,"
            "roles,rolebindings,networkpolicies,leases,poddisruptionbudgets",
            "-l",
            selector,
            "-o",
            "name",
        )
        cluster = kubectl("get", "clusterroles,clusterrolebindings", "-l", selector, "-o", "name")
        made = kubectl(
            "-n", ns, "get", "pods,secrets", "-l", "app.kubernetes.io/managed-by=buzz-operator", "-o", "name"
        )
        crs = kubectl("-n", ns, "get", "buzzsweeps,buzztrials", "-o", "name")
        helm_state = [
            s for s in kubectl("-n", ns, "get", "secrets", "-o", "name").split() if "sh.helm.release" in s
        ]
        return "\n".join(x for x in (namespaced, cluster, made, crs, *helm_state) if x.strip())

    deadline = time.monotonic() + 120
    while (left := leftovers()) and time.monotonic() < deadline:
        time.sleep(2)
    assert not left, left
    # CRDs stay (Helm never deletes crds/); they are cluster API, not release objects
    assert kubectl("get", "crd", "buzzsweeps.bench.buzz.dev", "-o", "name").strip()
