"""Fixtures for the operator tests: the shared cluster fixtures (tests/support/cluster.py) — a
fresh namespace per test, the CRDs, a fresh relay database, the dev relay in the cluster behind a
Service, and the Secrets a BuzzSweep refers to (relay owner key and DSN, stand-in API key).
The cluster and Postgres come from the integration tier's conftest."""

from tests.support.cluster import (  # noqa: F401  (pytest finds fixtures among a conftest's names)
    RELAY_URL,
    ROOT,
    ClusterRelay,
    cluster_relay,
    crds,
    host_ip,
    image_volumes,
    kube,
    kubectl,
    local_registry,
    make_sweep,
    namespace,
    relay_db,
    sweep_body,
    sweep_secrets,
    with_database,
)
