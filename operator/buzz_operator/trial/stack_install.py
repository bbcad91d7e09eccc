"""Installing the agent stack at /opt/buzz, per layout, and the digests manifest it leaves (pure).

The trial pod's (and the preflight canary's) `stack` init container runs ``install_command``
in the stack image. Both layouts end in the same place — /opt/buzz/bin/{buzz-acp, …}, the CA
bundle at /opt/buzz/ca-certificates.crt, logs/ and prompts/ writable by any user — and both
write /opt/buzz/stack-digests.txt: ``sha256sum`` of every file under bin/, symlinks resolved
(a link to sprig has sprig's digest), one ``<sha256>  bin/<name>`` line each, sorted by path.
The corridor reads that file back from the task container (trial/steps/stack.py, at launch), so what a trial
records is what its pod ran, not what a tag pointed to when the sweep was planned.

Only POSIX sh and the tools busybox (Alpine, the sprig image) and coreutils (Debian, the
folder images) both have are used: cp, ln, mkdir, chmod, find, sort, sha256sum.
"""

from __future__ import annotations

import hashlib
import re
import shlex

from buzz_operator.api.stack import StackDigests, StackLayout, StackSource
from buzz_operator.condition.paths import (
    REMOTE_BIN,
    REMOTE_CA_BUNDLE,
    REMOTE_LOGS,
    REMOTE_PROMPTS,
    REMOTE_ROOT,
)

FOLDER_SOURCE = "/stack"  # where a folder-layout image keeps the files it ships
SPRIG_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # the sprig image's (Alpine's) trust store
SPRIG_NAME = "sprig"
# The names Block's Dockerfile.sprig links to the multicall binary, which dispatches on argv[0].
SPRIG_LINKS = ("buzz-acp", "buzz-agent", "buzz-dev-mcp", "buzz", "rg", "tree", "git-credential-nostr",
               "git-sign-nostr")
MANIFEST_NAME = "stack-digests.txt"
STACK_MANIFEST = f"{REMOTE_ROOT}/{MANIFEST_NAME}"
# Without it no seat can launch (runtime_shell.launch_seat runs bin/buzz-acp): refuse the stack
# in its init container, where the message says which image and layout, not at launch.
REQUIRED = "buzz-acp"

_LINE = re.compile(r"^([0-9a-f]{64})  bin/(\S(?:.*\S)?)$")


def _fail(message: str) -> str:
    # the kubelet keeps the tail of the log of a failed container as its termination message
    # (terminationMessagePolicy FallbackToLogsOnError), which the failure reason then quotes
    return f"{{ echo {shlex.quote(message)} >&2; exit 1; }}"


def _sprig(source: StackSource) -> str:
    binary = shlex.quote(source.sprig_binary)
    links = " ".join(SPRIG_LINKS)
    return (
        f"[ -f {binary} ] || {_fail(f'stack: no {source.sprig_binary} in image {source.image} (spec.stack.binaryPath)')}"
        f" && [ -f {SPRIG_CA_BUNDLE} ] || {_fail(f'stack: no {SPRIG_CA_BUNDLE} in image {source.image}')}"
        f" && mkdir -p {REMOTE_BIN} && cp {binary} {REMOTE_BIN}/{SPRIG_NAME} && chmod 0755 {REMOTE_BIN}/{SPRIG_NAME}"
        f" && for name in {links}; do ln -sf {SPRIG_NAME} {REMOTE_BIN}/$name || exit 1; done"
        f" && cp {SPRIG_CA_BUNDLE} {REMOTE_CA_BUNDLE}"
    )


def _folder(source: StackSource) -> str:
    # `cp -R`, not `cp -a`: the emptyDir mount point is root's and the init container runs as
    # 65532, so preserving the source directory's attributes onto /opt/buzz fails with EPERM;
    # each file's mode survives a plain copy (the stack image makes bin/ 0755), and relative
    # symlinks (a sprig + links folder) are copied as links.
    return (
        f"[ -d {FOLDER_SOURCE}/bin ] || {_fail(f'stack: no {FOLDER_SOURCE}/bin in image {source.image} (layout folder)')}"
        f" && cp -R {FOLDER_SOURCE}/. {REMOTE_ROOT}/"
    )


# sha256sum opens each path, so a symlink is hashed as the file it resolves to; a dangling one
# fails the install rather than leaving a stack that cannot start.
WRITE_MANIFEST = (
    f"cd {REMOTE_ROOT} && find bin \\( -type f -o -type l \\) | LC_ALL=C sort"
    " | while IFS= read -r f; do sha256sum \"$f\" || exit 1; done"
    f" > {MANIFEST_NAME}.tmp && mv {MANIFEST_NAME}.tmp {MANIFEST_NAME}"
)


def install_command(source: StackSource) -> str:
    """The `sh -c` script of the `stack` init container for this source."""
    copy = _sprig(source) if source.layout is StackLayout.SPRIG else _folder(source)
    required = f"{REMOTE_BIN}/{REQUIRED}"
    return (
        f"{{ {copy}; }}"
        f" && {{ [ -x {required} ] || {_fail(f'stack: image {source.image} (layout {source.layout.value}) installs no executable bin/{REQUIRED}')}; }}"
        f" && {WRITE_MANIFEST}"
        # logs/ and prompts/ world-writable: the task image may run as any user and writes there
        f" && mkdir -p {REMOTE_LOGS} {REMOTE_PROMPTS} && chmod 0777 {REMOTE_LOGS} {REMOTE_PROMPTS}"
    )


READ_MANIFEST = f"cat {STACK_MANIFEST}"


class ManifestError(ValueError):
    """The digests manifest is missing, empty or not what install_command writes."""


def parse_manifest(text: str) -> StackDigests:
    """StackDigests of /opt/buzz/stack-digests.txt. The digest is sha256 over the manifest
    re-rendered sorted by path — the bytes install_command writes, so
    `sha256sum /opt/buzz/stack-digests.txt` in a pod gives the same value."""
    binaries: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _LINE.match(line)
        if match is None:
            raise ManifestError(f"{STACK_MANIFEST} line {number} is not '<sha256>  bin/<name>': {line[:80]!r}")
        binaries[match.group(2)] = match.group(1)
    if not binaries:
        raise ManifestError(f"{STACK_MANIFEST} lists no file under bin/")
    return StackDigests(digest=manifest_digest(binaries), binaries=binaries)


def render_manifest(binaries: dict[str, str]) -> str:
    # str order is code point order, which is the byte order `LC_ALL=C sort` uses on UTF-8
    return "".join(f"{binaries[name]}  bin/{name}\n" for name in sorted(binaries))


def manifest_digest(binaries: dict[str, str]) -> str:
    return hashlib.sha256(render_manifest(binaries).encode()).hexdigest()
