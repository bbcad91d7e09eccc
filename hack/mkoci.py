"""Write a one-layer OCI image archive from a rootfs directory (stdlib only).

usage: python3 hack/mkoci.py [--stop-signal SIG] [--env K=V]... ROOTFS OUT.tar NAME:TAG [ENTRYPOINT...]
Used for the pause image, which needs no base and no buildah (k8s-test-infra.md Appendix B), and
for the kind node image and its component images (hack/kind-node.sh); the node's systemd stops
on SIGRTMIN+3, hence --stop-signal.
"""

import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def main() -> None:
    args = sys.argv[1:]
    stop_signal = None
    env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    while args[:1] in (["--stop-signal"], ["--env"]):
        if args[0] == "--stop-signal":
            stop_signal = args[1]
        else:
            key = args[1].split("=", 1)[0]
            env = [e for e in env if not e.startswith(key + "=")] + [args[1]]
        args = args[2:]
    src, out, name = args[0], args[1], args[2]
    entry = args[3:] or ["/bin/sh"]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as t:
        for item in sorted(os.listdir(src)):
            t.add(os.path.join(src, item), arcname=item)
    layer_tar = raw.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer_tar).hexdigest()
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> str:
        d = hashlib.sha256(data).hexdigest()
        blobs[d] = data
        return "sha256:" + d

    # level 1: the kind node's layer is some 700 MB, and level 9 took minutes of a 2-core machine for a few % less
    layer_gz = gzip.compress(layer_tar, compresslevel=1, mtime=0)
    ldig = blob(layer_gz)
    config: dict[str, object] = {"Entrypoint": entry, "Env": env}
    if stop_signal:
        config["StopSignal"] = stop_signal
    cfg = {"architecture": "amd64", "os": "linux", "config": config,
           "rootfs": {"type": "layers", "diff_ids": [diff_id]}}
    cb = json.dumps(cfg).encode()
    cdig = blob(cb)
    man = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cdig, "size": len(cb)},
           "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": ldig,
                       "size": len(layer_gz)}]}
    mb = json.dumps(man).encode()
    mdig = blob(mb)
    # containerd stores the ref name as is; it must already be the fully qualified name (image-build.md step 4)
    index = {"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": mdig, "size": len(mb),
        "annotations": {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name}}]}
    with tarfile.open(out, "w") as t:
        def add(n: str, data: bytes) -> None:
            ti = tarfile.TarInfo(n)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", json.dumps(index).encode())
        for d, data in blobs.items():
            add("blobs/sha256/" + d, data)


if __name__ == "__main__":
    main()
