"""The trial pod, by hand (issue 6's pod criterion): the dev relay runs in the cluster behind a
Service; a tenant is provisioned from the host through the ClusterIP; the pod built by
`build_trial_pod` copies the stack into /opt/buzz, runs the task image and forwards
127.0.0.1:3600 to the relay Service; a stand-in seat launched by exec with the exact
`agent_env` reaches the relay at ws://localhost:3600 and subscribes to the trial channel."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.trial import BuzzTrialSpec
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
from buzz_operator.condition.paths import BUZZ_ACP, REMOTE_PROMPTS
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import tar
from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import create_pod, service_target
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address
from buzz_operator.relay.tenant import provision
from buzz_operator.relay.tenant_models import TenantRequest

ROOT = Path(__file__).resolve().parents[3]
RELAY_URL = "ws://localhost:3600"


async def create_trial(kube: Kube, namespace: str, name: str, spec: BuzzTrialSpec) -> str:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzTrial", "metadata": {"name": name},
            "spec": spec.to_api()}
    created = await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", body)
    return str(created["metadata"]["uid"])


async def test_seat_in_trial_pod_subscribes_through_forwarder(kube, namespace, cluster_relay, crds, make_trial_spec) -> None:  # type: ignore[no-untyped-def]
    manifest = ExperimentManifest.load(ROOT / "manifests" / "standin-oracle.yaml")
    endpoints = EndpointConfig.load(ROOT / "manifests" / "endpoints" / "standin.json")
    seats = plan_seats(manifest)
    handle, tenant_secrets = await provision(cluster_relay.target, TenantRequest(
        run_id="by-hand", trial_id=f"trial-{secrets.token_hex(8)}", manifest_sha256=manifest.sha256,
        seats=seats, channel_label="user-mention", task_name="user-mention"))

    spec = make_trial_spec("user-mention", manifest)
    uid = await create_trial(kube, namespace, "t1", spec)
    pod = build_trial_pod(
        trial_name="t1", trial_uid=uid, namespace=namespace, retry=0, spec=spec, trial_labels={},
        relay_listen=forwarder_listen_address(RELAY_URL),
        relay_target=await service_target(kube, namespace, cluster_relay.relay.service, cluster_relay.relay.port),
    )
    await create_pod(kube, namespace, pod)
    state = await wait_running(kube, namespace, "t1", timeout_s=120)
    assert state.ready, state

    seat = seats[0]
    pubkeys = {s.seat_id: s.pubkey for s in handle.seats}
    persona = (ROOT / "manifests" / manifest.roster_class(seat.class_id).prompt.path).read_bytes()
    prompt = compose_system_prompt(
        persona, seat_id=seat.seat_id, seat_pubkey=pubkeys[seat.seat_id], channel_id=handle.channel_id,
        user_name=handle.user.name, user_pubkey=handle.user.pubkey,
        teammates=teammates_of(seat.seat_id, seats, pubkeys))
    await tar.upload(kube, namespace, "t1", "task", REMOTE_PROMPTS,
                     tar.pack({f"{seat.seat_id}.system-prompt.md": (prompt, 0o600)}), timeout_s=30)
    seat_secret = tenant_secrets.seats[seat.seat_id]
    env = agent_env(manifest=manifest, seat=seat, endpoint=endpoints[seat.endpoint], relay_url=RELAY_URL,
                    secret_key_hex=seat_secret.secret_hex, auth_tag=seat_secret.auth_tag,
                    channel_id=handle.channel_id, api_key=f"standin-{secrets.token_hex(16)}",
                    prompt_path=remote_prompt_path(seat.seat_id))
    launch = (f"{BUZZ_ACP} </dev/null >{remote_stdout_log(seat.seat_id)} "
              f"2>{remote_stderr_log(seat.seat_id)} & echo $!")
    launched = await kexec.run(kube, namespace, "t1", "task", launch, env=env, timeout_s=30)
    assert launched.ok and launched.last_line().isdigit(), (launched, launched.stderr)

    marker = f"subscribed to channel {handle.channel_id}"
    logs = ""
    for _ in range(120):
        shown = await kexec.run(kube, namespace, "t1", "task",
                                f"cat {remote_stdout_log(seat.seat_id)} {remote_stderr_log(seat.seat_id)}",
                                timeout_s=30)
        logs = shown.text()
        if marker in logs:
            break
        await asyncio.sleep(0.5)
    assert marker in logs, logs

    # the seat's key reached the process only through the exec environment
    pod_json = json.dumps(kube.api.sanitize_for_serialization(await kube.core.read_namespaced_pod("t1", namespace)))
    assert seat_secret.secret_hex not in pod_json
    forwarder_log = await kube.core.read_namespaced_pod_log("t1", namespace, container="forwarder")
    assert f"forwarding 127.0.0.1:3600 -> {cluster_relay.relay.target}" in forwarder_log
