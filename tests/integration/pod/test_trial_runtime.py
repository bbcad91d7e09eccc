"""The corridor by the runtime, without kopf: a BuzzSweep and a BuzzTrial exist in the API, the
context is read through it (inline condition, builtin dataset, relay secrets, Service), and
`drive` walks provision → launch → run → collect → grade → bundle → teardown with the real
trial pod, the in-cluster dev relay and a file:// store, writing status at every step — with
the stack copied by the init container, and mounted as an image volume (docs/stack.md#mount)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.api.trial import BuzzTrialStatus, Phase
from buzz_operator.condition import ExperimentManifest
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.pod.stack_install import IMAGE_ROOT
from buzz_operator.trial.drive.driver import drive
from buzz_operator.trial.drive.setup import load_context
from buzz_operator.trial.state import status_patch

ROOT = Path(__file__).resolve().parents[3]


# the stack digest each mount recorded: one stack, so one digest (when one worker runs both)
DIGESTS: dict[str, str] = {}


@pytest.mark.parametrize("mount", [StackMount.COPY, StackMount.IMAGE])
async def test_oracle_trial_walks_the_corridor(kube: Kube, namespace, cluster_relay, crds, make_trial_spec, make_sweep, sweep_secrets, tmp_path: Path, mount: StackMount, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    if mount is StackMount.IMAGE:
        request.getfixturevalue("image_volumes")  # skips, saying so, on a runtime without them
    store = tmp_path / "store"
    api_key = sweep_secrets
    await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps",
                                                      make_sweep("s1", f"file://{store}", "user-mention"))
    spec = make_trial_spec("user-mention", ExperimentManifest.load(ROOT / "manifests" / "standin-oracle.yaml"))
    stack = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER, mount=mount)
    spec = spec.model_copy(update={"sweep_name": "s1", "stack": stack, "stack_image": None})
    trial = await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BuzzTrial", "metadata": {"name": "s1-t1"},
        "spec": spec.to_api()})
    ctx = await load_context(kube, trial, workdir=tmp_path / "work")

    written: list[BuzzTrialStatus] = []
    per_try_secret: dict[str, str] = {}
    seen: dict[str, object] = {}

    async def write(old: BuzzTrialStatus, new: BuzzTrialStatus) -> None:
        await kube.custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, "buzztrials", "s1-t1", {"status": status_patch(old, new)},
            _content_type="application/merge-patch+json")
        written.append(new)
        if new.phase is Phase.RUNNING and not per_try_secret:  # the seats were launched from it
            per_try_secret.update(await objects.read_secret(kube, namespace, "s1-t1-seats"))
            pod = await objects.read_pod(kube, namespace, "s1-t1") or {}
            seen["init"] = [c["name"] for c in pod["spec"].get("initContainers", [])]
            seen["buzz-acp"] = (await kexec.run(kube, namespace, "s1-t1", "task", "readlink -f /opt/buzz/bin/buzz-acp",
                                                timeout_s=30)).text().strip()

    final = await drive(ctx, BuzzTrialStatus(), write)

    assert final.phase is Phase.SUCCEEDED, final.model_dump(exclude_none=True)
    assert final.reward == 1.0 and final.outcome == "ok" and final.completion_message_id
    # entering Provisioning, Launching and Grading rides on the next write
    # (docs/corridor.md#writes-that-wait)
    assert [s.phase for s in written][:4] == [Phase.RUNNING, Phase.COLLECTING, Phase.BUNDLING, Phase.SUCCEEDED]
    assert written[0].phase_times.provisioning and written[0].phase_times.launching
    assert written[0].trial_id and written[0].tenant_secret and written[2].phase_times.grading
    stored = await kube.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials", "s1-t1")
    assert stored["status"]["phase"] == "Succeeded" and stored["status"]["reward"] == 1.0
    assert {c["type"] for c in stored["status"]["conditions"]} >= {"Provisioned", "Launched", "Bundled", "Released"}
    # the per-try Secret holds the seat and user keys only: the model API key was read from the
    # user's Secret when the seats were launched, never copied (issue 19)
    assert per_try_secret and all(k.startswith(("seat.", "user.")) for k in per_try_secret), sorted(per_try_secret)
    assert api_key not in per_try_secret.values()

    bundle = store / "s1" / "s1-t1"
    result = json.loads((bundle / "result.json").read_text())
    assert result["verifier_result"]["rewards"]["reward"] == 1.0 and result["exception_info"] is None
    summary = json.loads((bundle / "agent" / "buzz" / "summary.json").read_text())
    assert summary["secret_scan"]["clean"], summary["secret_scan"]
    # the stand-in stack as its pod installed it, read back at launch (docs/stack.md)
    stack = result["agent_result"]["metadata"]["stack"]
    assert stack["layout"] == "folder" and stack["image"] == "docker.io/buzz/stack:dev"
    assert set(stack["binaries"]) == {"buzz-acp", "buzz-agent", "buzz-dev-mcp", "buzz", "relay-forwarder"}
    assert final.stack is not None and stack["digest"] == final.stack.digest == stored["status"]["stack"]["digest"]
    assert summary["stack"] == stack
    # copy: the init container copied the stack; image: no init copy, bin/ links into the mount
    if mount is StackMount.COPY:
        assert seen["init"] == ["stack", "forwarder"] and seen["buzz-acp"] == "/opt/buzz/bin/buzz-acp", seen
    else:
        assert seen["init"] == ["forwarder"] and seen["buzz-acp"] == f"{IMAGE_ROOT}/stack/bin/buzz-acp", seen
    DIGESTS[mount.value] = stack["digest"]
    assert len(set(DIGESTS.values())) == 1, DIGESTS  # the same binaries, whichever way they arrived
    assert summary["accounting"]["reconciled"], summary["accounting"]
    # the box (docs/resources.md): the container's own cgroup read when the agents stopped and
    # around the verifier, in the status and in result.json beside the headroom it had
    used = stored["status"]["resourceUsage"]
    assert used["agents"]["cpuSeconds"] > 0 and used["agents"]["oomKills"] == 0, used
    assert used["verifier"]["cpuSeconds"] >= 0 and used["agents"]["memoryLimitMB"] == 256.0, used
    assert result["agent_result"]["metadata"]["resource_usage"] == used
    assert result["agent_result"]["metadata"]["headroom"] == {
        "limitMultiple": 1.0, "cpuRequestFraction": 1.0, "memoryRequestFraction": 1.0}
    for name in ("solo-1.stdout.log", "solo-1.system-prompt.md", "buzz-evidence.json", "transcript.json",
                 "receipts.jsonl", "timing.json", "relay-forwarder.log"):
        assert (bundle / "agent" / "buzz" / name).is_file(), name
    assert (bundle / "verifier" / "reward.json").is_file()
    everything = "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
    assert api_key not in everything and cluster_relay.owner.secret_hex not in everything

    # teardown deleted the pod and the per-try Secret
    assert await objects.read_pod(kube, namespace, "s1-t1") in (None,) or \
        (await objects.read_pod(kube, namespace, "s1-t1") or {}).get("metadata", {}).get("deletionTimestamp")
    secrets = await kube.core.list_namespaced_secret(namespace)
    assert "s1-t1-seats" not in {s.metadata.name for s in secrets.items}
