"""`buzz-operator` as a process: it logs in with the kubeconfig, serves its liveness endpoint
(with the trial probe), and exits cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from tests.support.ports import free_port


def test_console_script_serves_liveness_and_stops_on_sigterm(namespace: str, crds: None, tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    script = os.path.join(os.path.dirname(sys.executable), "buzz-operator")
    log = (tmp_path / "operator.log").open("wb")
    proc = subprocess.Popen([script, "-n", namespace, "--liveness", f"http://127.0.0.1:{port}/healthz"],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "BUZZ_WORKDIR": str(tmp_path)})
    try:
        body = None
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                    body = json.loads(response.read())
                    break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None, (tmp_path / "operator.log").read_text()
                time.sleep(0.5)
        assert body is not None and body.get("trials") == 0, body
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        log.close()
    assert code == 0, (tmp_path / "operator.log").read_text()
