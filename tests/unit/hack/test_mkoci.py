"""hack/mkoci.py writes a one-layer OCI archive containerd and podman import: the layer's diff id is
the digest of the uncompressed tar, every blob is named by its digest, the name is carried in
both annotations, and --env / --stop-signal land in the image config (the kind node's systemd
stops on SIGRTMIN+3; the Postgres image puts its binaries first on PATH)."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "hack" / "mkoci.py"


def archive(tmp_path: Path, *options: str) -> dict[str, bytes]:
    root = tmp_path / "root"
    (root / "usr/local/bin").mkdir(parents=True)
    (root / "usr/local/bin/tool").write_text("#!/bin/sh\necho hi\n")
    out = tmp_path / "image.tar"
    subprocess.run([sys.executable, str(SCRIPT), *options, str(root), str(out), "docker.io/buzz/x:1",
                    "/usr/local/bin/tool", "--flag"], check=True)
    with tarfile.open(out) as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}  # type: ignore[union-attr]


def config_of(files: dict[str, bytes]) -> dict:
    index = json.loads(files["index.json"])
    [entry] = index["manifests"]
    assert entry["annotations"] == {"io.containerd.image.name": "docker.io/buzz/x:1",
                                    "org.opencontainers.image.ref.name": "docker.io/buzz/x:1"}
    manifest = json.loads(files["blobs/sha256/" + entry["digest"].split(":")[1]])
    config = json.loads(files["blobs/sha256/" + manifest["config"]["digest"].split(":")[1]])
    [layer] = manifest["layers"]
    blob = files["blobs/sha256/" + layer["digest"].split(":")[1]]
    assert hashlib.sha256(blob).hexdigest() == layer["digest"].split(":")[1]
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(gzip.decompress(blob)).hexdigest()]
    return config


def test_the_archive_is_a_consistent_oci_image(tmp_path: Path) -> None:
    config = config_of(archive(tmp_path))["config"]
    assert config["Entrypoint"] == ["/usr/local/bin/tool", "--flag"]
    assert config["Env"] == ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    assert "StopSignal" not in config


def test_env_replaces_a_key_and_adds_others_and_the_stop_signal_is_set(tmp_path: Path) -> None:
    config = config_of(archive(tmp_path, "--stop-signal", "SIGRTMIN+3", "--env", "PATH=/opt/bin:/bin",
                               "--env", "LANG=C.UTF-8"))["config"]
    assert config["Env"] == ["PATH=/opt/bin:/bin", "LANG=C.UTF-8"]
    assert config["StopSignal"] == "SIGRTMIN+3"
