"""sweep new --apply against the local apiserver: the ConfigMaps, the Secret with the key read
from the environment, and a BuzzSweep the CRD schema accepts; a second apply is refused."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.cli.conftest import ROOT, kubectl

BUZZCTL = Path(sys.executable).with_name("buzzctl")
KEY = "standin-" + "4e" * 16


def test_apply_creates_every_object(namespace: str, kubeconfig: str) -> None:
    argv = [str(BUZZCTL), "sweep", "new", "--manifest", str(ROOT / "manifests/standin-team.yaml"),
            "--endpoints", str(ROOT / "manifests/endpoints/standin.json"), "--dataset", "builtin",
            "--name", "team", "-n", namespace, "--attempts", "2", "--apply"]  # fmt: skip
    env = {**os.environ, "KUBECONFIG": kubeconfig, "STANDIN_API_KEY": KEY}
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "configmap/team-condition created",
        "configmap/team-endpoints created",
        "secret/team-api-keys created",
        "buzzsweep.bench.buzz.dev/team created",
    ]
    assert KEY not in done.stdout + done.stderr
    secret = json.loads(kubectl("-n", namespace, "get", "secret", "team-api-keys", "-o", "json"))
    assert base64.b64decode(secret["data"]["STANDIN_API_KEY"]).decode() == KEY
    sweep = json.loads(kubectl("-n", namespace, "get", "buzzsweeps.bench.buzz.dev", "team", "-o", "json"))
    assert sweep["spec"]["attempts"] == 2 and sweep["spec"]["endpoints"]["secretRef"] == {
        "name": "team-api-keys"
    }
    condition = json.loads(kubectl("-n", namespace, "get", "configmap", "team-condition", "-o", "json"))
    assert set(condition["data"]) == {"manifest.yaml", "personas__lead.md", "personas__worker.md"}

    again = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert again.returncode == 1 and "already exists" in again.stderr
