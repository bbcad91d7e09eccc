"""Relays whose URL pods dial directly, with no forwarder (docs/relay-urls.md), for the pod and
operator tiers:

- `deploy_clusterip_relay`: the dev relay in the cluster bound to ws://<its Service's ClusterIP>:3600
  — the Service is made first, so the relay can be started with the URL its clients will dial;
- `host_tls_relay`: `python -m buzz_operator.dev.relay` on the host, serving wss://<host IP>:<port>
  with a certificate signed by a private CA made for the test (BUZZ_TLS_CERT_FILE/KEY_FILE), which
  pods reach on the host's address as they reach the host's Postgres.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from buzz_operator.dev import deploy_relay
from buzz_operator.dev.localstack import host_ip, with_database
from buzz_operator.kube.client import Kube
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import await_healthy
from buzz_operator.relay.tenant_models import RelayTarget

from tests.support.ports import free_port
from tests.support.private_ca import PrivateCA, make_private_ca


@dataclass(frozen=True)
class DirectRelay:
    url: str  # what agents and the operator dial, as written
    target: RelayTarget  # the operator's view: the URL itself, no connect_url
    owner: Keypair
    ca: PrivateCA | None = None


async def deploy_clusterip_relay(kube: Kube, namespace: str, pg_dsn: str, relay_db: str) -> DirectRelay:
    owner, relay_key = Keypair.generate(), Keypair.generate()
    await kube.core.create_namespaced_service(namespace, deploy_relay.relay_service("relay", deploy_relay.RELAY_PORT))
    cluster_ip = (await kube.core.read_namespaced_service("relay", namespace)).spec.cluster_ip
    url = f"ws://{cluster_ip}:{deploy_relay.RELAY_PORT}"
    await deploy_relay.deploy(kube, namespace, name="relay", relay_url=url, owner_pubkey=owner.pubkey_hex,
                              relay_secret_hex=relay_key.secret_hex,
                              database_url=with_database(pg_dsn, relay_db, host=host_ip()))
    target = RelayTarget(url=url, owner_secret_hex=owner.secret_hex, pg_dsn=with_database(pg_dsn, relay_db))
    await await_healthy(target, timeout_s=60)
    return DirectRelay(url, target, owner)


@contextlib.contextmanager
def host_tls_relay(pg_dsn: str, relay_db: str, directory: Path) -> Iterator[DirectRelay]:
    """The dev relay as a host process behind TLS; stopped (SIGTERM) when the block exits."""
    address = host_ip()
    ca = make_private_ca(directory, dns=(), ips=(address,))
    owner, relay_key = Keypair.generate(), Keypair.generate()
    port = free_port(address)
    url = f"wss://{address}:{port}"
    env = {**os.environ, "RELAY_URL": url, "RELAY_OWNER_PUBKEY": owner.pubkey_hex,
           "BUZZ_RELAY_PRIVATE_KEY": relay_key.secret_hex, "DATABASE_URL": with_database(pg_dsn, relay_db),
           "BUZZ_BIND": f"{address}:{port}", "BUZZ_TLS_CERT_FILE": str(ca.server_cert),
           "BUZZ_TLS_KEY_FILE": str(ca.server_key)}
    log = (directory / "relay.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "buzz_operator.dev.relay"], env=env, stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        target = RelayTarget(url=url, owner_secret_hex=owner.secret_hex, pg_dsn=with_database(pg_dsn, relay_db),
                             ca_pem=ca.ca_pem)
        deadline = time.monotonic() + 30
        while True:  # listening: the readiness check itself is the caller's (it is async)
            with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the TLS dev relay did not start: {(directory / 'relay.log').read_text()}")
            time.sleep(0.1)
        yield DirectRelay(url, target, owner, ca)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
