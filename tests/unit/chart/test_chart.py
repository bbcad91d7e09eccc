"""The chart renders, lints and refuses bad values; what it renders is least privilege and
passes the restricted profile; its CRDs are the generated ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.corpus import load_corpus
from tests.unit.chart.chartlib import (
    CHART,
    CLUSTER_WIDE,
    ROOT,
    SELF_CONTAINED,
    granted,
    helm,
    load_values,
    of_kind,
    pod_specs,
    render,
    restricted_violations,
    selects,
)

VALUE_SETS = {"default": (), "self-contained": (SELF_CONTAINED,), "cluster-wide": (CLUSTER_WIDE,)}


def test_crds_are_the_generated_ones() -> None:
    generated = sorted(p.name for p in (ROOT / "crds").glob("*.yaml"))
    shipped = sorted(p.name for p in (CHART / "crds").glob("*.yaml"))
    assert shipped == generated
    for name in generated:
        assert (CHART / "crds" / name).read_bytes() == (ROOT / "crds" / name).read_bytes(), (
            f"charts/buzz-operator/crds/{name} differs from crds/{name}: cp crds/*.yaml charts/buzz-operator/crds/"
        )


@pytest.mark.parametrize("files", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_lint_strict(files: tuple[Path, ...]) -> None:
    args = ["lint", "--strict", str(CHART)]
    for f in files:
        args += ["-f", str(f)]
    result = helm(*args, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("files", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_every_object_has_kind_name_and_an_api_both_1_29_and_current_serve(files: tuple[Path, ...]) -> None:
    served = {
        "v1",
        "apps/v1",
        "policy/v1",
        "coordination.k8s.io/v1",
        "rbac.authorization.k8s.io/v1",
        "networking.k8s.io/v1",
        "apiextensions.k8s.io/v1",
        "monitoring.coreos.com/v1",
    }
    for doc in render(*files):
        assert doc.get("apiVersion") in served, doc.get("apiVersion")
        assert doc.get("kind") and doc["metadata"].get("name"), doc


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        (
            {"image": {"repository": "r", "tag": "t", "pullPolicy": "IfNotPresent", "tgA": "x"}},
            "Additional property tgA is not allowed",
        ),
        ({"metrcis": {}}, "Additional property metrcis is not allowed"),
        ({"operator": {"logFormat": "xml"}}, "logFormat"),
        ({"metrics": {"port": "9090"}}, "port"),
        ({"trialNetworkPolicy": {"endpoints": [{"cidr": "api.openai.com", "ports": [443]}]}}, "cidr"),
        ({"watch": {"namespaces": ["Not_A_Namespace"]}}, "namespaces"),
        ({"trialRuntimeClassName": "gVisor sandbox"}, "trialRuntimeClassName"),
    ],
    ids=["typo-nested", "typo-top", "enum", "type", "cidr-not-host", "namespace-pattern", "runtime-class-pattern"],
)
def test_schema_refuses_bad_values(values: dict[str, Any], complaint: str) -> None:
    args = ["template", "rel", str(CHART)]
    for key, value in values.items():
        args += ["--set-json", f"{key}={json.dumps(value)}"]
    result = helm(*args, check=False)
    assert result.returncode != 0
    assert complaint in result.stderr, result.stderr


def test_every_values_key_is_documented_by_a_comment() -> None:
    lines = (CHART / "values.yaml").read_text().splitlines()
    undocumented = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("-") or ":" not in stripped:
            continue
        key = stripped.split(":", 1)[0]
        if key in ("requests", "limits", "cpu", "memory"):  # the Kubernetes resources shape
            continue
        if not (i and lines[i - 1].strip().startswith("#")):
            undocumented.append(f"line {i + 1}: {stripped}")
    assert not undocumented, undocumented


def test_schema_sets_additional_properties_false_on_every_chart_object() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    loose = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if (
                node.get("type") == "object"
                and "properties" in node
                and node.get("additionalProperties") is not False
            ):
                loose.append(path)
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(schema, "$")
    assert not loose, loose
    # and the defaults themselves validate (helm template would refuse otherwise)
    assert load_values()["watch"]["allNamespaces"] is False


@pytest.mark.parametrize("files", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_rbac_has_no_wildcards_and_no_write_access_beyond_the_operators_objects(
    files: tuple[Path, ...],
) -> None:
    docs = render(*files)
    rules = granted(docs)
    assert rules
    assert not [r for r in rules if "*" in r], rules
    writes = {(g, r) for g, r, v in rules if v in ("create", "update", "patch", "delete", "deletecollection")}
    assert writes <= {
        ("bench.buzz.dev", "buzzsweeps"),
        ("bench.buzz.dev", "buzztrials"),
        ("bench.buzz.dev", "buzzsweeps/status"),
        ("bench.buzz.dev", "buzztrials/status"),
        ("", "pods"),
        ("", "pods/exec"),
        ("", "secrets"),
        ("", "events"),
        ("coordination.k8s.io", "leases"),  # the leader's Lease (docs/leadership.md)
    }, writes
    assert not [r for r in rules if r[2] in ("update", "deletecollection", "escalate", "bind", "impersonate")]


def test_namespaced_mode_binds_roles_per_namespace_and_only_scanning_cluster_wide() -> None:
    docs = render(values={"watch": {"allNamespaces": False, "namespaces": ["team-a", "team-b"]}})
    roles = without_leader(of_kind(docs, "Role"))
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["team-a", "team-b"]
    assert sorted(b["metadata"]["namespace"] for b in without_leader(of_kind(docs, "RoleBinding"))) == ["team-a", "team-b"]
    [cluster_role] = of_kind(docs, "ClusterRole")
    assert granted([cluster_role]) == {
        ("apiextensions.k8s.io", "customresourcedefinitions", "list"),
        ("apiextensions.k8s.io", "customresourcedefinitions", "watch"),
        ("", "namespaces", "list"),
        ("", "namespaces", "watch"),
        ("", "nodes", "list"),  # images pulled ahead onto the nodes (docs/registry.md#images-pulled-ahead)
    }
    without = render(values={"watch": {"allNamespaces": False, "namespaces": ["team-a"]}, "prepull": {"concurrency": 0}})
    assert ("", "nodes", "list") not in granted(of_kind(without, "ClusterRole"))
    [deployment] = of_kind(docs, "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--namespace=team-a" in args and "--namespace=team-b" in args and "--all-namespaces" not in args
    # the agents policy and the three grading ones, in each served namespace
    assert sorted(p["metadata"]["namespace"] for p in of_kind(docs, "NetworkPolicy")) == ["team-a"] * 4 + ["team-b"] * 4


def without_leader(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sweep namespaces' Roles and bindings: not the release namespace's for the Lease (leadership.yaml)."""
    return [d for d in docs if not d["metadata"]["name"].endswith("-leader")]


SECRET_RULES = {("", "secrets", verb) for verb in ("get", "list", "create", "delete")}


def test_cluster_wide_mode_uses_one_cluster_role_and_reads_secrets_only_where_sweeps_run() -> None:
    docs = render(CLUSTER_WIDE)
    assert len(of_kind(docs, "ClusterRole")) == 2 and len(of_kind(docs, "ClusterRoleBinding")) == 2
    [deployment] = of_kind(docs, "Deployment")
    assert "--all-namespaces" in deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert ("", "namespaces", "list") not in granted(docs)  # kopf lists namespaces only in namespaced mode
    # no ClusterRole may read the cluster's Secrets: a Role per sweep namespace grants them
    assert not granted(of_kind(docs, "ClusterRole")) & SECRET_RULES
    roles = without_leader(of_kind(docs, "Role"))
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["team-a", "team-b"]  # trialNetworkPolicy's
    assert all(granted([r]) == SECRET_RULES for r in roles)
    bindings = without_leader(of_kind(docs, "RoleBinding"))
    assert sorted((b["metadata"]["namespace"], b["roleRef"]["name"]) for b in bindings) == [
        ("team-a", "rel-buzz-operator-secrets"), ("team-b", "rel-buzz-operator-secrets")]


def test_cluster_wide_secret_namespaces_and_the_explicit_opt_in() -> None:
    listed = render(CLUSTER_WIDE, values={"rbac": {"create": True, "secretNamespaces": ["bench"]}})
    assert [r["metadata"]["namespace"] for r in without_leader(of_kind(listed, "Role"))] == ["bench"]
    alone = render(values={"watch": {"allNamespaces": True}})
    assert [r["metadata"]["namespace"] for r in without_leader(of_kind(alone, "Role"))] == ["buzz"]  # the release namespace
    opted_in = render(CLUSTER_WIDE, values={"rbac": {"create": True, "clusterWideSecrets": True}})
    assert not without_leader(of_kind(opted_in, "Role")) and not without_leader(of_kind(opted_in, "RoleBinding"))
    assert granted(of_kind(opted_in, "ClusterRole")) >= SECRET_RULES
    # the same calls are granted either way, so the integration test's used-vs-granted check holds for both
    assert granted(listed) == granted(opted_in)


def test_namespaced_mode_grants_secrets_in_each_served_namespace_only() -> None:
    docs = render(values={"watch": {"allNamespaces": False, "namespaces": ["team-a"]},
                          "rbac": {"create": True, "clusterWideSecrets": True}})
    [role] = without_leader(of_kind(docs, "Role"))
    assert granted([role]) >= SECRET_RULES and not granted(of_kind(docs, "ClusterRole")) & SECRET_RULES


@pytest.mark.parametrize("files", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_every_rendered_pod_passes_the_restricted_profile(files: tuple[Path, ...]) -> None:
    specs = pod_specs(render(*files))
    assert specs
    failing = {name: bad for name, spec in specs if (bad := restricted_violations(spec))}
    assert not failing, failing


def test_the_restricted_check_can_fail() -> None:
    spec = {
        "hostNetwork": True,
        "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
        "containers": [
            {"name": "c", "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}}
        ],
    }
    bad = restricted_violations(spec)
    for fragment in (
        "hostNetwork",
        "hostPath",
        "privileged",
        "allowPrivilegeEscalation",
        "runAsNonRoot",
        "seccompProfile",
        "drop lacks ALL",
        "SYS_ADMIN",
        "readOnlyRootFilesystem",
    ):
        assert any(fragment in b for b in bad), (fragment, bad)


def test_operator_deployment_shape() -> None:
    [deployment] = of_kind(render(), "Deployment")
    spec = deployment["spec"]
    # two replicas, one leading (docs/leadership.md): a new pod may start before the old one stops
    assert spec["replicas"] == 2
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    pod = spec["template"]["spec"]
    [container] = pod["containers"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["resources"]["limits"] and container["resources"]["requests"]
    assert {"--liveness=http://0.0.0.0:8080/healthz", "--metrics=0.0.0.0:9090", "--log-format=json"} <= set(
        container["args"]
    )
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/tmp", "/work"} <= mounts  # writable scratch under a read-only root
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["BUZZ_OPERATOR_IMAGE"] == container["image"] and env["BUZZ_WORKDIR"] == "/work"


def test_a_changed_value_rolls_the_operator() -> None:
    def checksum(**values: Any) -> str:
        [d] = of_kind(render(values=values), "Deployment")
        return d["spec"]["template"]["metadata"]["annotations"]["checksum/values"]

    assert checksum() == checksum()
    assert checksum() != checksum(operator={"sweepIntervalSeconds": 7})


def policies_by_name(docs: list[dict[str, Any]], release: str = "rel") -> dict[str, dict[str, Any]]:
    """The trial NetworkPolicies by their name's suffix: "" (agents), "-grading", "-grading-mirrors",
    "-grading-internet"."""
    prefix = f"{release}-buzz-operator-trials"
    return {p["metadata"]["name"].removeprefix(prefix): p for p in of_kind(docs, "NetworkPolicy")}


PUBLIC = [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
                                                        "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"]}}]
KUBE_DNS = {"podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}, "namespaceSelector": {"matchLabels": {}}}
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def test_trial_network_policy_denies_all_then_allows_relay_endpoints_and_dns() -> None:
    docs = render(SELF_CONTAINED)
    spec = policies_by_name(docs)[""]["spec"]
    assert spec["podSelector"] == {
        "matchLabels": {"app.kubernetes.io/managed-by": "buzz-operator"},
        # pods made before phases existed have no label and keep the agents policy; a regrade's
        # pod (grading-pod) never gets it
        "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": ["trial-pod"]},
                             {"key": "bench.buzz.dev/phase", "operator": "NotIn", "values": ["grading"]}],
    }
    assert sorted(spec["policyTypes"]) == ["Egress", "Ingress"] and spec["ingress"] == []
    relay, endpoint, dns = spec["egress"]
    [relay_service] = [s for s in of_kind(docs, "Service") if s["metadata"]["name"].endswith("-dev-relay")]
    # the policy names the relay pods the relay Service sends to (a ClusterIP would never match)
    assert relay["to"][0]["podSelector"]["matchLabels"].items() <= relay_service["spec"]["selector"].items()
    assert relay["ports"] == [{"protocol": "TCP", "port": 3600}]
    assert endpoint == {
        "to": [{"ipBlock": {"cidr": "203.0.113.0/24"}}],
        "ports": [{"protocol": "TCP", "port": 443}],
    }
    assert dns == {"to": [KUBE_DNS], "ports": DNS_PORTS}  # the rule the chart rendered before dnsResolvers
    # nothing else: no rule without `to` (which would allow every destination)
    assert all(rule.get("to") for rule in spec["egress"])


def test_the_default_endpoint_is_public_https_and_the_cluster_stays_closed() -> None:
    [endpoint, dns] = policies_by_name(render())[""]["spec"]["egress"]
    assert endpoint == {"to": PUBLIC, "ports": [{"protocol": "TCP", "port": 443}]}
    assert dns["ports"] == DNS_PORTS


def test_endpoints_by_pod_selector_admit_an_in_cluster_model_service() -> None:
    """The demo's scripted model (dev/deploy_model.py: pods labelled app.kubernetes.io/name=buzz-scripted-model
    behind a Service on 8091), and an endpoint in another namespace."""
    from buzz_operator.dev import deploy_model

    pod_labels = deploy_model.model_pod("m", image="i")["metadata"]["labels"]
    values = {"trialNetworkPolicy": {"endpoints": [
        {"podSelector": {"app.kubernetes.io/name": deploy_model.LABEL}, "ports": [deploy_model.MODEL_PORT]},
        {"podSelector": {"app": "vllm"}, "namespaceSelector": {"kubernetes.io/metadata.name": "models"},
         "ports": [8000]},
        {"cidr": "203.0.113.0/24", "except": ["203.0.113.128/25"], "ports": [443, 8443]},
    ]}}
    scripted, vllm, cidr, _dns = policies_by_name(render(values=values))[""]["spec"]["egress"]
    assert scripted == {"to": [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "buzz-scripted-model"}}}],
                        "ports": [{"protocol": "TCP", "port": 8091}]}
    assert scripted["to"][0]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert vllm["to"] == [{"podSelector": {"matchLabels": {"app": "vllm"}},
                           "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "models"}}}]
    assert cidr == {"to": [{"ipBlock": {"cidr": "203.0.113.0/24", "except": ["203.0.113.128/25"]}}],
                    "ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 8443}]}


def test_dns_goes_to_the_configured_resolvers() -> None:
    values = {"trialNetworkPolicy": {"dnsResolvers": [
        {"cidr": "169.254.20.10/32"},  # NodeLocal DNSCache
        {"podSelector": {"k8s-app": "node-local-dns"}, "namespaceSelector": {"kubernetes.io/metadata.name": "kube-system"}},
    ]}}
    policies = policies_by_name(render(values=values))
    expected = {"to": [{"ipBlock": {"cidr": "169.254.20.10/32"}},
                       {"podSelector": {"matchLabels": {"k8s-app": "node-local-dns"}},
                        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}}],
                "ports": DNS_PORTS}
    assert policies[""]["spec"]["egress"][-1] == expected
    assert policies["-grading-mirrors"]["spec"]["egress"][-1] == expected


def test_grading_policies_select_disjoint_phases_by_the_tasks_network() -> None:
    """Policies add up: a pod must be selected by the agents policy or by the grading ones, never both;
    a grading pod always by the deny-all base, then by the mirrors (public, allowlist) and the
    internet (public) by its network label."""
    from buzz_operator.api import labels as L
    from buzz_operator.pod.trial_pod import NETWORKS, build_grading_pod, grading_labels, pod_labels

    from tests.unit.pod.test_trial_pod import _spec as trial_spec

    values = {"trialNetworkPolicy": {"grading": {
        "mirrors": [{"podSelector": {"app": "pypi-mirror"}, "ports": [8080]}],
        "internet": [{"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}],
    }}}
    policies = policies_by_name(render(values=values))
    assert set(policies) == {"", "-grading", "-grading-mirrors", "-grading-internet"}
    agents = pod_labels({}, "t1", 0)
    assert agents[L.PHASE] == L.PHASE_AGENTS
    selected = {name for name, p in policies.items() if selects(p, agents)}
    assert selected == {""}
    legacy = {k: v for k, v in agents.items() if k != L.PHASE}  # a pod made before the upgrade
    assert {name for name, p in policies.items() if selects(p, legacy)} == {""}
    expected = {"public": {"-grading", "-grading-mirrors", "-grading-internet"},
                "allowlist": {"-grading", "-grading-mirrors"}, "no-network": {"-grading"}}
    for network in NETWORKS:
        graded = {**agents, **grading_labels(network)}
        assert {name for name, p in policies.items() if selects(p, graded)} == expected[network], network
        # a regrade's pod runs the same verifier and gets the same grading egress, never the agents'
        regrade = build_grading_pod(trial_name="t1", trial_uid="u", namespace="ns", generation=1,
                                    spec=trial_spec(), trial_labels={}, network=network)
        assert {name for name, p in policies.items() if selects(p, regrade["metadata"]["labels"])} == \
            expected[network], network
    base = policies["-grading"]["spec"]
    assert base["egress"] == [] and base["ingress"] == [] and sorted(base["policyTypes"]) == ["Egress", "Ingress"]
    mirror, dns = policies["-grading-mirrors"]["spec"]["egress"]
    assert mirror == {"to": [{"podSelector": {"matchLabels": {"app": "pypi-mirror"}}}],
                      "ports": [{"protocol": "TCP", "port": 8080}]}
    assert dns["ports"] == DNS_PORTS
    # the internet without ports: every port, to what the entry names
    assert policies["-grading-internet"]["spec"]["egress"] == [
        {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}]}]
    for policy in policies.values():
        assert all(rule.get("to") for rule in policy["spec"]["egress"]), policy["metadata"]["name"]


def test_the_default_grading_phase_reaches_the_internet_for_public_tasks_only() -> None:
    policies = policies_by_name(render())
    assert policies["-grading-internet"]["spec"]["egress"] == [{"to": PUBLIC}]
    assert policies["-grading-mirrors"]["spec"]["egress"] == [{"to": [KUBE_DNS], "ports": DNS_PORTS}]
    # without DNS and mirrors and the internet, the grading phase is the deny-all base alone
    sealed = {"trialNetworkPolicy": {"dns": False, "grading": {"mirrors": [], "internet": []}}}
    assert set(policies_by_name(render(values=sealed))) == {"", "-grading"}


def test_trial_pods_match_the_policy_selector() -> None:
    from buzz_operator.pod.trial_pod import pod_labels

    assert selects(policies_by_name(render())[""], pod_labels({}, "t1", 0))


def test_the_canary_carries_the_trial_policy_labels() -> None:
    from buzz_operator.api.stack import StackLayout, StackSource
    from buzz_operator.preflight import canary

    pod = canary.canary_pod(sweep="s", sweep_uid="u", namespace="ns", stack=StackSource(image="st", layout=StackLayout.FOLDER),
                            operator_image="op", task_images=["t"], pull_policy="Never")
    policies = policies_by_name(render())
    assert {name for name, p in policies.items() if selects(p, pod["metadata"]["labels"])} == {""}


def test_without_a_relay_only_endpoints_and_dns_are_allowed_and_dns_can_go() -> None:
    egress = policies_by_name(render())[""]["spec"]["egress"]
    assert [r["ports"][0]["port"] for r in egress] == [443, 53]
    values = {"trialNetworkPolicy": {"dns": False, "endpoints": [], "allowNoEndpoints": True}}
    policy = policies_by_name(render(values=values))[""]
    assert policy["spec"]["egress"] == [] or policy["spec"].get("egress") is None


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"endpoints": []}, "trialNetworkPolicy.endpoints is empty"),
        ({"dnsResolvers": []}, "trialNetworkPolicy.dnsResolvers is empty"),
        ({"endpoints": [{"podSelector": {}, "ports": [443]}]}, "podSelector"),
        ({"endpoints": [{"cidr": "203.0.113.0/24", "podSelector": {"a": "b"}, "ports": [443]}]}, "endpoints.0"),
        ({"endpoints": [{"cidr": "203.0.113.0/24", "ports": []}]}, "ports"),
        ({"endpoints": [{"cidr": "203.0.113.0/24"}]}, "ports"),
        ({"endpoints": [{"ports": [443]}]}, "endpoints.0"),
        ({"endpoints": [{"namespaceSelector": {}, "ports": [443]}]}, "endpoints.0"),
        ({"dnsResolvers": [{}]}, "dnsResolvers.0"),
        ({"grading": {"mirrors": [{"podSelector": {}}]}}, "podSelector"),
        ({"grading": {"internet": [{"cidr": "everywhere"}]}}, "cidr"),
        ({"grading": {"everything": True}}, "everything"),
    ],
    ids=["no-endpoint", "no-resolver", "empty-pod-selector", "cidr-and-selector", "no-ports", "ports-missing",
         "no-destination", "namespace-without-pods", "empty-resolver", "mirror-empty-selector",
         "internet-not-a-cidr", "grading-typo"],
)
def test_a_policy_that_would_block_every_endpoint_or_admit_everything_is_refused(
    values: dict[str, Any], complaint: str
) -> None:
    result = helm("template", "rel", str(CHART), "--set-json", f"trialNetworkPolicy={json.dumps(values)}",
                  check=False)
    assert result.returncode != 0, f"rendered: {values}"
    assert complaint in result.stderr, result.stderr


def test_an_install_without_endpoints_says_so_explicitly() -> None:
    values = {"trialNetworkPolicy": {"endpoints": [], "allowNoEndpoints": True}}
    assert [r["ports"][0]["port"] for r in policies_by_name(render(values=values))[""]["spec"]["egress"]] == [53]
    # no policy, nothing to refuse
    assert not of_kind(render(values={"trialNetworkPolicy": {"enabled": False, "endpoints": []}}), "NetworkPolicy")


def test_dev_relay_needs_a_database() -> None:
    result = helm("template", "rel", str(CHART), "--set", "devRelay.enabled=true", check=False)
    assert result.returncode != 0 and "needs a database" in result.stderr


def test_self_contained_secrets_carry_what_a_sweep_names() -> None:
    docs = render(SELF_CONTAINED, release="demo")
    secrets = {s["metadata"]["name"]: s for s in of_kind(docs, "Secret")}
    relay = secrets["demo-buzz-operator-dev-relay"]["stringData"]
    assert set(relay) == {"owner-key", "relay-private-key", "postgres-dsn"}
    assert len(relay["owner-key"]) == 64 and int(relay["owner-key"], 16)
    assert (
        relay["postgres-dsn"].startswith("postgresql://buzz:")
        and "demo-buzz-operator-postgres" in relay["postgres-dsn"]
    )
    assert set(secrets["demo-buzz-operator-objectstore"]["stringData"]) == {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
    }


def test_a_dev_relay_in_another_namespace_is_matched_with_its_namespace() -> None:
    docs = render(
        CLUSTER_WIDE,
        namespace="buzz",
        values={
            "devRelay": {"enabled": True, "databaseURL": "postgres://u@h/d"},
            "trialNetworkPolicy": {"namespaces": ["buzz", "team-a"], "relay": {"cidrs": [], "ports": [3600]}},
        },
    )
    policies = {p["metadata"]["namespace"]: p for p in of_kind(docs, "NetworkPolicy")
                if p["metadata"]["name"].endswith("-trials")}
    same = policies["buzz"]["spec"]["egress"][0]["to"][0]
    other = policies["team-a"]["spec"]["egress"][0]["to"][0]
    assert "namespaceSelector" not in same
    assert other["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "buzz"}}
    assert other["podSelector"] == same["podSelector"]


def _operator_pod(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, str | None]]:
    [deployment] = of_kind(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    return pod, {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}


def test_without_a_claim_bundles_have_no_volume_and_file_storage_is_refused() -> None:
    pod, env = _operator_pod(render())
    assert "bundles" not in {v["name"] for v in pod["volumes"]}
    assert env["BUZZ_EPHEMERAL_PATHS"] == "/"  # storage/durability.py refuses every file:// URL
    assert not of_kind(render(), "PersistentVolumeClaim")


@pytest.mark.parametrize(
    ("bundles", "claim"),
    [({"existingClaim": "evidence"}, "evidence"),
     ({"claim": {"create": True, "accessMode": "ReadWriteMany"}}, "rel-buzz-operator-bundles")],
    ids=["existing-claim", "chart-claim"],
)
def test_a_claim_holds_file_bundles(bundles: dict[str, Any], claim: str) -> None:
    docs = render(values={"bundles": bundles})
    pod, env = _operator_pod(docs)
    [volume] = [v for v in pod["volumes"] if v["name"] == "bundles"]
    assert volume == {"name": "bundles", "persistentVolumeClaim": {"claimName": claim}}
    assert env["BUZZ_EPHEMERAL_PATHS"] == "/tmp:/work"  # the scratch emptyDirs stay refused
    created = of_kind(docs, "PersistentVolumeClaim")
    if "claim" in bundles:
        [pvc] = created
        assert pvc["metadata"]["name"] == claim and pvc["spec"]["resources"]["requests"]["storage"] == "20Gi"
        assert pvc["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"  # evidence outlives the release
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]  # whichever replica leads mounts it
    else:
        assert not created


def test_ephemeral_bundles_are_an_explicit_choice() -> None:
    pod, env = _operator_pod(render(values={"bundles": {"ephemeral": True}}))
    [volume] = [v for v in pod["volumes"] if v["name"] == "bundles"]
    assert volume == {"name": "bundles", "emptyDir": {}} and env["BUZZ_EPHEMERAL_PATHS"] == ""


CHART_CASES = load_corpus().CHART_CASES


@pytest.mark.parametrize("case", CHART_CASES, ids=[c.id for c in CHART_CASES])
def test_bad_chart_values_of_the_corpus_are_refused_naming_the_value(case: Any) -> None:
    args = ["template", "rel", str(CHART)]
    for key, value in case.values.items():
        args += ["--set-json", f"{key}={json.dumps(value)}"]
    result = helm(*args, check=False)
    assert result.returncode != 0, f"{case.id} was rendered"
    assert case.field in result.stderr, f"{case.id}: {result.stderr!r} does not name {case.field}"


def test_leader_election_lease_role_and_disruption_budget() -> None:
    docs = render()
    [lease] = of_kind(docs, "Lease")
    assert lease["metadata"]["name"] == "rel-buzz-operator" and lease["metadata"]["namespace"] == "buzz"
    [role] = [r for r in of_kind(docs, "Role") if r["metadata"]["name"] == "rel-buzz-operator-leader"]
    assert role["metadata"]["namespace"] == "buzz"
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert named == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                      "resourceNames": ["rel-buzz-operator"], "verbs": ["get", "patch"]}]
    [budget] = of_kind(docs, "PodDisruptionBudget")
    assert budget["spec"]["minAvailable"] == 1
    [deployment] = of_kind(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert {"--leader-election", "--lease-name=rel-buzz-operator", "--lease-namespace=buzz"} <= set(args)
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]


def test_one_replica_without_leader_election_is_the_old_shape() -> None:
    docs = render(values={"operator": {"replicas": 1, "leaderElection": {"enabled": False}}})
    [deployment] = of_kind(docs, "Deployment")
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert not of_kind(docs, "Lease") and not of_kind(docs, "PodDisruptionBudget")
    assert "--leader-election" not in deployment["spec"]["template"]["spec"]["containers"][0]["args"]


@pytest.mark.parametrize(("values", "complaint"), [
    ({"operator": {"replicas": 2, "leaderElection": {"enabled": False}}}, "needs operator.leaderElection.enabled"),
    ({"bundles": {"claim": {"create": True}}}, "bundles.claim.accessMode"),
])
def test_several_replicas_need_the_lease_and_a_claim_every_node_can_mount(values: dict[str, Any],
                                                                          complaint: str) -> None:
    args = ["template", "rel", str(CHART)]
    for key, value in values.items():
        args += ["--set-json", f"{key}={json.dumps(value)}"]
    result = helm(*args, check=False)
    assert result.returncode != 0 and complaint in result.stderr, result.stderr


@pytest.mark.parametrize(("server", "command", "keys", "probe"), [
    ("minio", "exec minio server /data", {"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"}, "/minio/health/ready"),
    ("versitygw", "exec versitygw --port :9000 --health /health posix /data",
     {"ROOT_ACCESS_KEY_ID", "ROOT_SECRET_ACCESS_KEY"}, "/health"),
])
def test_the_object_store_runs_the_named_server_with_the_secrets_keys(
    server: str, command: str, keys: set[str], probe: str
) -> None:
    docs = render(SELF_CONTAINED, release="demo", values={"objectStore": {"enabled": True, "server": server}})
    [store] = [d for d in of_kind(docs, "Deployment") if d["metadata"]["name"] == "demo-buzz-operator-objectstore"]
    [container] = store["spec"]["template"]["spec"]["containers"]
    assert container["name"] == server
    assert command in container["command"][-1] and "mkdir -p /data/buzz-bundles" in container["command"][-1]
    from_secret = {e["name"]: e["valueFrom"]["secretKeyRef"]["key"] for e in container["env"] if "valueFrom" in e}
    assert set(from_secret) == keys
    assert sorted(from_secret.values()) == ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
    assert container["readinessProbe"]["httpGet"]["path"] == probe


def test_an_unknown_object_store_server_is_refused_naming_the_field() -> None:
    result = helm("template", "rel", str(CHART), "--set", "objectStore.server=ceph", check=False)
    assert result.returncode != 0 and "objectStore.server" in result.stderr, result.stderr


def test_a_first_install_gives_the_relay_the_password_postgres_starts_with() -> None:
    """Two templates need the in-cluster Postgres password; on a first install (no Secret to look
    up) each once drew its own random value, and the dev relay could never log in (found on kind)."""
    docs = render(SELF_CONTAINED, release="demo")
    secrets = {s["metadata"]["name"]: s["stringData"] for s in of_kind(docs, "Secret")}
    password = secrets["demo-buzz-operator-postgres"]["password"]
    assert len(password) == 64
    assert secrets["demo-buzz-operator-dev-relay"]["postgres-dsn"].startswith(f"postgresql://buzz:{password}@")
