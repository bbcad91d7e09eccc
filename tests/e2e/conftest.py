"""Fixtures for whole-sweep tests: the shared cluster fixtures (tests/support/cluster.py) —
the local cluster and Postgres started through hack/ when not running, a fresh namespace and
relay database per test, the dev relay in the cluster, and the Secrets a BuzzSweep refers to."""

from tests.support.cluster import (  # noqa: F401  (pytest finds fixtures among a conftest's names)
    RELAY_URL,
    ROOT,
    ClusterRelay,
    cluster_relay,
    crds,
    host_ip,
    kube,
    kubeconfig,
    kubectl,
    local_registry,
    make_sweep,
    namespace,
    pg_dsn,
    relay_db,
    sweep_body,
    sweep_secrets,
    with_database,
)
