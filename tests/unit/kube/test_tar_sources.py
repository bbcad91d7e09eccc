"""kube/tar.split_by_source: one tar of several pod directories (rooted at /, as
download_many packs it) is handed back per directory, each file once, under its path relative
to that directory — nested sources keep their own files, an absent one is empty."""

from __future__ import annotations

import io
import tarfile

from buzz_operator.kube.tar import split_by_source, unpack


def _tar(names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in names:
            info = tarfile.TarInfo(name)
            data = name.encode()
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("opt/buzz/logs/evil")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        archive.addfile(link)
    return buffer.getvalue()


def test_one_tar_is_split_back_into_its_directories() -> None:
    files = unpack(_tar(["opt/buzz/logs/solo-1.stdout.log", "opt/buzz/logs/raw/turns.jsonl",
                         "opt/buzz/state/active_started.json", "logs/verifier/reward.txt",
                         "logs/verifier/nested/out.txt", "opt/buzz/prompts-old/x"]))
    split = split_by_source(files, ["/opt/buzz/logs", "/opt/buzz/state", "/logs/verifier",
                                    "/logs/verifier/nested", "/logs/artifacts", "/opt/buzz/prompts"])
    assert split["/opt/buzz/logs"] == {"solo-1.stdout.log": b"opt/buzz/logs/solo-1.stdout.log",
                                       "raw/turns.jsonl": b"opt/buzz/logs/raw/turns.jsonl"}
    assert split["/opt/buzz/state"] == {"active_started.json": b"opt/buzz/state/active_started.json"}
    assert split["/logs/verifier"] == {"reward.txt": b"logs/verifier/reward.txt"}
    assert split["/logs/verifier/nested"] == {"out.txt": b"logs/verifier/nested/out.txt"}
    # absent, and a sibling whose name merely starts the same (prompts-old) is not prompts
    assert split["/logs/artifacts"] == {} and split["/opt/buzz/prompts"] == {}
