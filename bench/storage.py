"""Bundle upload throughput: a 50 MB trial bundle through upload_bundle to the S3 test server
(hack/s3.sh: versitygw on loopback, posix backend) and to a FileStore, median of several runs.

The bundle is shaped like a real one: one large transcript, a few MB-sized seat logs, many small
JSON files, result.json last. The S3 figure measures the client path plus a local versitygw
writing to this disk, not a production S3; the FileStore figure includes fsync per file.

Run: ``.venv/bin/python bench/storage.py`` (starts the S3 test server if it is not running).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "operator"))

from buzz_operator.storage import FileStore, ObjectStore, S3Store, upload_bundle  # noqa: E402
from buzz_operator.storage.s3_admin import ensure_bucket  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from figures import INFO, Figure, record  # noqa: E402

MB = 1_000_000


def make_bundle(root: Path) -> int:
    """Write a 50 MB bundle under root; its size in bytes."""
    files: dict[str, int] = {"agent/buzz/transcript.json": 30 * MB}
    files |= {f"agent/buzz/seat-{i}.stdout.log": 3 * MB for i in range(6)}
    files |= {f"agent/buzz/seat-{i}.stderr.log": 200_000 for i in range(6)}
    files |= {f"verifier/detail-{i}.json": 20_000 for i in range(10)}
    files["config.json"] = 4_000
    files["result.json"] = 4_000
    # top up to exactly 50 MB with the receipts file
    files["agent/buzz/receipts.jsonl"] = 50 * MB - sum(files.values())
    for rel, size in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(os.urandom(size))
    return sum(files.values())


def s3_settings() -> dict[str, str]:
    def hack(command: str) -> str:
        return subprocess.run(
            ["bash", str(ROOT / "hack/s3.sh"), command], check=True, capture_output=True, text=True
        ).stdout

    hack("up")
    return dict(line.split("=", 1) for line in hack("env").splitlines() if "=" in line)


async def measure(store: ObjectStore, bundle: Path, size: int, runs: int) -> list[float]:
    rates = []
    for run in range(runs):
        start = time.perf_counter()
        await upload_bundle(store, "bench", f"trial-{run}-{os.getpid()}", bundle)
        rates.append(size / MB / (time.perf_counter() - start))
    return rates


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    settings = s3_settings()
    endpoint = settings["BUZZ_S3_ENDPOINT"]
    creds = {"access_key": settings["BUZZ_S3_ACCESS_KEY"], "secret_key": settings["BUZZ_S3_SECRET_KEY"]}
    bucket = f"bench-{os.getpid()}"
    ensure_bucket(endpoint, bucket, region=settings["BUZZ_S3_REGION"], **creds)

    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "bundle"
        size = make_bundle(bundle)
        count = sum(1 for p in bundle.rglob("*") if p.is_file())
        stores: dict[str, ObjectStore] = {
            "P4 bundle upload 50 MB to S3 (versitygw on loopback)": S3Store(
                bucket, endpoint=endpoint, region=settings["BUZZ_S3_REGION"], **creds
            ),
            "P4 bundle upload 50 MB to a FileStore (fsync per file)": FileStore(Path(tmp) / "store"),
        }
        print(f"bundle: {size / MB:.0f} MB in {count} files, {args.runs} runs each")
        print(f"{'store':44} {'median MB/s':>12} {'min':>8} {'max':>8}")
        for name, store in stores.items():
            rates = await measure(store, bundle, size, args.runs)
            print(f"{name:44} {statistics.median(rates):12.1f} {min(rates):8.1f} {max(rates):8.1f}")
            record(Figure(name, "MB/s", rates, INFO, note=f"{count} files; median of {args.runs} uploads"))
            for key in await store.list():  # the server keeps them on disk: give it back
                await store.delete(key)


if __name__ == "__main__":
    asyncio.run(main())
