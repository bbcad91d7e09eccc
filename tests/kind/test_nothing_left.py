"""After `make kind-down` (hack/kind-down.sh): no node container of the cluster, none of its
volumes, no network kind made, no state under $RUN/kind: the kind tier leaves nothing behind."""

from __future__ import annotations

from tests.kind.conftest import CLUSTER, RUN, run_engine


def test_no_node_container_volume_or_network_is_left() -> None:
    containers = run_engine("ps", "-a", "--filter", f"label=io.x-k8s.kind.cluster={CLUSTER}", "--format", "{{.Names}}")
    assert containers.strip() == "", containers
    # kind labels each node's /var volume with the node's name
    volumes = run_engine("volume", "ls", "--filter", f"label={CLUSTER}-control-plane", "--format", "{{.Name}}")
    assert volumes.strip() == "", volumes
    networks = run_engine("network", "ls", "--format", "{{.Name}}").split()
    assert "kind" not in networks, networks


def test_no_state_is_left() -> None:
    assert not (RUN / "kind").exists(), sorted(p.name for p in (RUN / "kind").iterdir())
