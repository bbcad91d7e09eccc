"""Which runtimes mount image volumes, by the version string nodes report (kube/runtimes.py)."""

from __future__ import annotations

import pytest
from buzz_operator.kube.runtimes import mounts_image_volumes


@pytest.mark.parametrize(("runtime", "mounts"), [
    ("containerd://2.2.9", True),
    ("containerd://2.1.0", True),
    ("containerd://2.2.9+unknown", True),  # built from source (hack/build-containerd.sh)
    ("containerd://2.0.5", False),
    ("containerd://1.7.24", False),
    ("containerd://1.7.24~ds1", False),  # Debian's
    ("cri-o://1.31.0", True),
    ("cri-o://1.30.4", False),
    ("docker://27.1.0", False),
    ("containerd://v2", False),
    ("", False),
])
def test_containerd_from_2_1_and_cri_o_from_1_31(runtime: str, mounts: bool) -> None:
    assert mounts_image_volumes(runtime) is mounts
