"""Trial pods and the relay URL kinds of docs/relay-urls.md. With no forwarder, the relay URL is one
pods can route to, and the stand-in seat launched by exec with the exact `agent_env` dials it as
written and subscribes to the trial channel:

- ws://<ClusterIP>:3600: the dev relay in the cluster, bound to its own Service's address;
- wss://<host IP>:<port>: the dev relay on the host behind TLS, its certificate signed by a
  private CA; the CA reaches the agents through the launch exec's own script (INSTALL_RELAY_CA,
  after the CA is unpacked beside the stack: appended to the CA file SSL_CERT_FILE names), and the operator's
  side provisions the tenant trusting the same CA.

And a loopback URL other than localhost: ws://[::1]:3600 gets a forwarder listening on [::1].
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

from buzz_operator.condition import (
    EndpointConfig,
    ExperimentManifest,
    agent_env,
    compose_system_prompt,
    plan_seats,
    remote_prompt_path,
    remote_stderr_log,
    remote_stdout_log,
    teammates_of,
)
from buzz_operator.condition.paths import BUZZ_ACP, REMOTE_CA_BUNDLE, REMOTE_PROMPTS, REMOTE_ROOT
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import tar
from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import create_pod, service_target
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod.relay_ca import INSTALL_RELAY_CA, RELAY_CA_NAME
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address
from buzz_operator.relay.tenant import await_healthy, provision
from buzz_operator.relay.tenant_models import RelayTarget, TenantRequest

from tests.integration.pod.test_trial_pod import create_trial
from tests.support.direct_relay import deploy_clusterip_relay, host_tls_relay

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "manifests" / "standin-oracle.yaml"


async def _direct_pod(kube: Kube, namespace: str, name: str, make_trial_spec) -> None:  # type: ignore[no-untyped-def]
    spec = make_trial_spec("user-mention", ExperimentManifest.load(MANIFEST))
    uid = await create_trial(kube, namespace, name, spec)
    pod = build_trial_pod(trial_name=name, trial_uid=uid, namespace=namespace, retry=0, spec=spec, trial_labels={},
                          relay_listen=None, relay_target=None)
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["stack"]  # no forwarder
    await create_pod(kube, namespace, pod)
    state = await wait_running(kube, namespace, name, timeout_s=120)
    assert state.ready, state


async def _seat_subscribes(kube: Kube, namespace: str, pod: str, target: RelayTarget) -> None:
    """Provision a tenant through `target`, launch the orchestrator seat in `pod` dialling
    target.url, and wait for it to subscribe to the trial channel."""
    manifest = ExperimentManifest.load(MANIFEST)
    endpoints = EndpointConfig.load(ROOT / "manifests" / "endpoints" / "standin.json")
    seats = plan_seats(manifest)
    handle, tenant_secrets = await provision(target, TenantRequest(
        run_id="direct", trial_id=f"trial-{secrets.token_hex(8)}", manifest_sha256=manifest.sha256,
        seats=seats, channel_label="user-mention", task_name="user-mention"))
    seat = seats[0]
    pubkeys = {s.seat_id: s.pubkey for s in handle.seats}
    persona = (ROOT / "manifests" / manifest.roster_class(seat.class_id).prompt.path).read_bytes()
    prompt = compose_system_prompt(
        persona, seat_id=seat.seat_id, seat_pubkey=pubkeys[seat.seat_id], channel_id=handle.channel_id,
        user_name=handle.user.name, user_pubkey=handle.user.pubkey, teammates=teammates_of(seat.seat_id, seats, pubkeys))
    await tar.upload(kube, namespace, pod, "task", REMOTE_PROMPTS,
                     tar.pack({f"{seat.seat_id}.system-prompt.md": (prompt, 0o600)}), timeout_s=30)
    seat_secret = tenant_secrets.seats[seat.seat_id]
    env = agent_env(manifest=manifest, seat=seat, endpoint=endpoints[seat.endpoint], relay_url=target.url,
                    secret_key_hex=seat_secret.secret_hex, auth_tag=seat_secret.auth_tag,
                    channel_id=handle.channel_id, api_key=f"standin-{secrets.token_hex(16)}",
                    prompt_path=remote_prompt_path(seat.seat_id))
    assert env["SSL_CERT_FILE"] == REMOTE_CA_BUNDLE
    launch = f"{BUZZ_ACP} </dev/null >{remote_stdout_log(seat.seat_id)} 2>{remote_stderr_log(seat.seat_id)} & echo $!"
    launched = await kexec.run(kube, namespace, pod, "task", launch, env=env, timeout_s=30)
    assert launched.ok and launched.last_line().isdigit(), (launched, launched.stderr)
    marker, logs = f"subscribed to channel {handle.channel_id}", ""
    for _ in range(120):
        logs = (await kexec.run(kube, namespace, pod, "task",
                                f"cat {remote_stdout_log(seat.seat_id)} {remote_stderr_log(seat.seat_id)}",
                                timeout_s=30)).text()
        if marker in logs:
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"the seat did not subscribe through {target.url}: {logs}")


async def test_seat_dials_a_clusterip_relay_without_forwarder(  # type: ignore[no-untyped-def]
    kube, namespace, crds, relay_db, pg_dsn, make_trial_spec
) -> None:
    relay = await deploy_clusterip_relay(kube, namespace, pg_dsn, relay_db)
    await _direct_pod(kube, namespace, "direct-ws", make_trial_spec)
    await _seat_subscribes(kube, namespace, "direct-ws", relay.target)


async def test_seat_dials_a_private_ca_wss_relay_without_forwarder(  # type: ignore[no-untyped-def]
    kube, namespace, crds, relay_db, pg_dsn, make_trial_spec, tmp_path: Path
) -> None:
    with host_tls_relay(pg_dsn, relay_db, tmp_path / "relay") as relay:
        assert relay.ca is not None
        await await_healthy(relay.target, timeout_s=30)
        await _direct_pod(kube, namespace, "direct-wss", make_trial_spec)
        before = (await kexec.run(kube, namespace, "direct-wss", "task",
                                  f"grep -c 'BEGIN CERTIFICATE' {REMOTE_CA_BUNDLE}", timeout_s=30)).last_line()
        # what the launch exec does with spec.relay.caBundle: the CA unpacked, then its script
        await tar.upload(kube, namespace, "direct-wss", "task", REMOTE_ROOT,
                         tar.pack({RELAY_CA_NAME: relay.ca.ca_pem.encode()}), timeout_s=30)
        installed = await kexec.run(kube, namespace, "direct-wss", "task", INSTALL_RELAY_CA, timeout_s=30)
        assert installed.last_line().startswith("installed "), (installed, installed.stderr)
        after = (await kexec.run(kube, namespace, "direct-wss", "task",
                                 f"grep -c 'BEGIN CERTIFICATE' {REMOTE_CA_BUNDLE}", timeout_s=30)).last_line()
        assert int(after) == int(before) + 1, (before, after)  # the public roots stay
        await _seat_subscribes(kube, namespace, "direct-wss", relay.target)


async def test_seat_dials_ipv6_loopback_through_the_forwarder(  # type: ignore[no-untyped-def]
    kube, namespace, crds, cluster_relay, make_trial_spec
) -> None:
    url = "ws://[::1]:3600"  # the relay is bound to localhost:3600, and [::1] is the same tenant
    spec = make_trial_spec("user-mention", ExperimentManifest.load(MANIFEST))
    uid = await create_trial(kube, namespace, "loopback-v6", spec)
    pod = build_trial_pod(
        trial_name="loopback-v6", trial_uid=uid, namespace=namespace, retry=0, spec=spec, trial_labels={},
        relay_listen=forwarder_listen_address(url),
        relay_target=await service_target(kube, namespace, cluster_relay.relay.service, cluster_relay.relay.port))
    await create_pod(kube, namespace, pod)
    state = await wait_running(kube, namespace, "loopback-v6", timeout_s=120)
    assert state.ready, state
    target = RelayTarget(url=url, owner_secret_hex=cluster_relay.owner.secret_hex,
                         pg_dsn=cluster_relay.target.pg_dsn, connect_url=cluster_relay.target.connect_url)
    await _seat_subscribes(kube, namespace, "loopback-v6", target)
    forwarder_log = await kube.core.read_namespaced_pod_log("loopback-v6", namespace, container="forwarder")
    assert f"forwarding [::1]:3600 -> {cluster_relay.relay.target}" in forwarder_log
