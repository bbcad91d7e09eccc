"""Every test that takes ``harbor_release`` runs once per Harbor release the tier covers: the
pinned ones, and the newest the package index serves when it is newer (hack/harbor.sh releases)."""

from __future__ import annotations

import pytest

from tests.support.harbor_venv import harbor_releases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "harbor_release" in metafunc.fixturenames:
        # module scope: a module's corpus fixture is read once per release
        metafunc.parametrize("harbor_release", harbor_releases(), scope="module")
