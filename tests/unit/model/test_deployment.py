"""How the scripted model is deployed for the demo and the e2e tier: a Pod from the operator image
behind a Service, and the endpoint config rewritten to the Service's ClusterIP (no cluster DNS)."""

from __future__ import annotations

import json
from pathlib import Path

from buzz_operator.condition import EndpointConfig
from buzz_operator.dev.demo import scripted_endpoints
from buzz_operator.dev.deploy_model import MODEL_PORT, DevModel, model_pod, model_service, point_endpoints

ROOT = Path(__file__).resolve().parents[3]


def test_the_pod_serves_the_scripted_model_from_the_operator_image() -> None:
    pod = model_pod("buzz-scripted-model", image="docker.io/buzz/operator:dev")
    (container,) = pod["spec"]["containers"]
    assert container["command"][:3] == ["python3", "-m", "buzz_operator.dev.model"]
    assert container["command"][-2:] == ["--port", str(MODEL_PORT)]
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": MODEL_PORT}
    # Pod Security `restricted` holds: the demo namespace may enforce it
    assert container["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    service = model_service("buzz-scripted-model", 8091)
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()


def test_endpoints_are_pointed_at_the_cluster_ip_keeping_their_paths() -> None:
    config = {"a": {"provider": "openai", "api_key_env": "K", "env": {"OPENAI_COMPAT_BASE_URL": "http://svc:8091/v1"}},
              "b": {"provider": "anthropic", "api_key_env": "K", "env": {"ANTHROPIC_BASE_URL": "http://svc:8091"}},
              "c": {"provider": "standin", "api_key_env": "K", "env": {}}}
    pointed = point_endpoints(config, DevModel("m", "ns", 8091, "10.0.0.7").base_url)
    assert pointed["a"]["env"] == {"OPENAI_COMPAT_BASE_URL": "http://10.0.0.7:8091/v1"}
    assert pointed["b"]["env"] == {"ANTHROPIC_BASE_URL": "http://10.0.0.7:8091"}
    assert pointed["c"] == config["c"] and config["a"]["env"]["OPENAI_COMPAT_BASE_URL"] == "http://svc:8091/v1"


def test_the_demo_config_map_is_scripted_json_on_the_cluster_ip() -> None:
    config_map = scripted_endpoints("http://10.0.0.7:8091/v1")
    assert config_map["metadata"]["name"] == "scripted-endpoints"
    endpoints = EndpointConfig.load(json.loads(config_map["data"]["scripted.json"]))
    shipped = EndpointConfig.load(ROOT / "manifests" / "endpoints" / "scripted.json")
    assert set(endpoints) == set(shipped)
    assert {e.env["OPENAI_COMPAT_BASE_URL"] for e in endpoints.values()} == {"http://10.0.0.7:8091/v1"}
