"""A sweep whose storage is S3 (the versitygw test server, credentials from a Kubernetes Secret the sweep
names — the operator's own environment has none) and whose dataset is a prefix in that store,
uploaded the way `buzzctl dataset push` does: the trial runs from the downloaded task, its
bundle and the sweep's lock/config/summary land in the bucket, and the S3 secret key appears in
no status and no stored object."""

from __future__ import annotations

import json
import os
from pathlib import Path

from buzz_operator.kube import objects
from buzz_operator.storage import open_store
from kopf.testing import KopfRunner

from tests.integration.operator.test_operator import apply, condition, kubectl_json, operator_args, wait_until

ROOT = Path(__file__).resolve().parents[3]
TASK = "user-mention"


async def test_sweep_reads_its_dataset_from_s3_and_writes_bundles_there(  # type: ignore[no-untyped-def]
    namespace, crds, kube, sweep_secrets, make_sweep, s3_server, tmp_path: Path
) -> None:
    credentials = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")
    assert not any(k in os.environ for k in credentials), "the test proves the Secret is used"
    bucket = s3_server.fresh_bucket()
    url = f"s3://{bucket}/runs"
    store = open_store(url, endpoint=s3_server.endpoint, access_key=s3_server.access_key,
                       secret_key=s3_server.secret_key, region=s3_server.region)
    # dataset "builtin" under another source: the task images built for the suite serve it
    await store.put_dir(f"datasets/builtin/{TASK}", ROOT / "tasks" / TASK)
    await objects.create_secret(kube, namespace, objects.secret_body(
        "s3-creds", {"AWS_ACCESS_KEY_ID": s3_server.access_key, "AWS_SECRET_ACCESS_KEY": s3_server.secret_key,
                     "AWS_REGION": s3_server.region}, labels={}, owner=None))
    body = make_sweep("s3", store_url=url, tasks=[TASK],
                      dataset={"objectStore": {"prefix": "datasets/builtin"}},
                      storage={"url": url, "endpoint": s3_server.endpoint, "credentialsSecretRef": {"name": "s3-creds"}})
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)

        def complete():  # type: ignore[no-untyped-def]
            sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "s3")
            done = condition(sweep, "Complete")
            accepted = condition(sweep, "Accepted")
            assert not accepted or accepted["status"] != "False", accepted
            return sweep if done and done["status"] == "True" else None

        sweep = wait_until(complete, 420, "the S3 sweep to complete")
    assert runner.exception is None, runner.output
    assert sweep["status"]["meanReward"] == 1.0, sweep["status"]
    [trial] = kubectl_json("-n", namespace, "get", "buzztrials")["items"]
    name = trial["metadata"]["name"]
    assert trial["status"]["bundleURL"] == f"{url}/s3/{name}"
    keys = await store.list("s3")
    for key in ("s3/config.json", "s3/lock.json", "s3/summary.json", f"s3/{name}/result.json",
                f"s3/{name}/agent/buzz/receipts.jsonl", f"s3/{name}/agent/buzz/buzz-evidence.json"):
        assert key in keys, key
    lock = json.loads(await store.get("s3/lock.json"))
    assert lock["dataset"] == "builtin" and list(lock["tasks"]) == [TASK]
    stored = b"".join([await store.get(k) for k in keys])
    for secret in (s3_server.secret_key, sweep_secrets):
        assert secret.encode() not in stored
        assert secret not in json.dumps(sweep) and secret not in json.dumps(trial)
