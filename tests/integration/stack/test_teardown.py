"""`make cluster-down` leaves nothing behind: no process, mount, network namespace, bridge,
iptables chain or cgroup of the stack. It tears the cluster down, so it runs after every other
test of the session (see the `teardown` marker in tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RUN = Path(os.environ.get("BUZZ_RUN", "/var/tmp/buzz-operator"))
CACHE = Path(os.environ.get("BUZZ_CACHE", Path.home() / ".cache/buzz-operator"))


def sh(cmd: str) -> str:
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True).stdout


@pytest.mark.teardown
def test_cluster_down_leaves_nothing(kubeconfig: str) -> None:
    started = time.monotonic()
    subprocess.run(["bash", str(ROOT / "hack/cluster-down.sh")], check=True, stdin=subprocess.DEVNULL)
    print(f"\ncluster-down took {time.monotonic() - started:.1f}s")

    processes = sh(f"ps -eo pid,args | grep -E '{CACHE}/k8s/|etcd --data-dir {RUN}|containerd --config {RUN}"
                   f"|containerd-shim|postgres -D {RUN}|{RUN}/s3' | grep -v grep")
    assert processes == "", f"processes left behind:\n{processes}"
    mounts = [line for line in Path("/proc/mounts").read_text().splitlines()
              if str(RUN) in line or str(CACHE / "containerd") in line or "kubelet" in line]
    assert mounts == [], f"mounts left behind: {mounts}"
    assert "cni-" not in sh("ip netns list"), "pod network namespaces left behind"
    assert sh("ip -o link show buzzbr0 2>/dev/null") == "", "the pod bridge is still there"
    chains = [line for table in ("nat", "filter", "mangle", "raw")
              for line in sh(f"iptables -t {table} -S").splitlines()
              if line.startswith("-N KUBE-") or line.startswith("-N CNI-") or "-j KUBE-" in line]
    assert chains == [], f"iptables chains or jumps left behind: {chains}"
    ipsets = [name for name in sh("ipset list -n 2>/dev/null").split() if name.startswith(("KUBE-", "kube-router"))]
    assert ipsets == [], f"kube-router ipsets left behind: {ipsets}"
    cgroups = sh("ls -d /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/k8s.io 2>/dev/null")
    assert cgroups == "", f"cgroups left behind:\n{cgroups}"
    assert not (RUN / "pids").exists() and not (RUN / "kubelet").exists()
