"""The realstack tier: Block's real agent stack and relay through the operator (stack_fixtures.py
says which binaries it takes and how it runs them); skipped, saying why, when they are not given."""

from tests.realstack.stack_fixtures import (  # noqa: F401  (pytest finds fixtures among a conftest's names)
    pytest_collection_modifyitems,
    real_relay,
    redis,
    scripted_model,
    stack_image,
)
from tests.support.cluster import (  # noqa: F401
    cluster_relay,
    crds,
    image_volumes,
    kube,
    kubeconfig,
    namespace,
    pg_dsn,
    relay_db,
)
