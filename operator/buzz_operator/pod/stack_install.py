"""Installing the agent stack at /opt/buzz, per layout, and the digests manifest it leaves (pure).

With spec.stack.mount copy, the trial pod's (and the preflight canary's) `stack` init container
runs ``install_command`` in the stack image; with mount image, the launch exec (and the canary's
first exec) runs ``mount_install_command`` in the task container, linking bin/ into the stack
image mounted at /opt/buzz-image (docs/stack.md#mount). Both layouts, both mounts, end in the same place — /opt/buzz/bin/{buzz-acp, …}, the CA
bundle at /opt/buzz/ca-certificates.crt, logs/ and prompts/ writable by any user — and both
write /opt/buzz/stack-digests.txt: ``sha256sum`` of every file under bin/, symlinks resolved
(a link to sprig has sprig's digest), one ``<sha256>  bin/<name>`` line each, sorted by path.
The corridor reads that file back from the task container (trial/steps/stack.py, at launch), so what a trial
records is what its pod ran, not what a tag pointed to when the sweep was planned.

Only POSIX sh and the tools busybox (Alpine, the sprig image) and coreutils (Debian, the
folder images) both have are used: cp, ln, mkdir, chmod, find, sort, readlink, sha256sum.
"""

from __future__ import annotations

import hashlib
import re
import shlex

from buzz_operator.api.stack import StackDigests, StackLayout, StackMount, StackSource
from buzz_operator.condition.paths import (
    REMOTE_BIN,
    REMOTE_CA_BUNDLE,
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
# Without it no seat can launch (shell.launch_seat runs bin/buzz-acp): refuse the stack
# in its init container, where the message says which image and layout, not at launch.
REQUIRED = "buzz-acp"

_LINE = re.compile(r"^([0-9a-f]{64})  bin/(\S(?:.*\S)?)$")


def _fail(message: str, to: str = ">&2") -> str:
    # the init container's refusal goes to stderr: the kubelet keeps the tail of the log of a
    # failed container as its termination message (terminationMessagePolicy
    # FallbackToLogsOnError), which the failure reason then quotes. The launch exec's (mount
    # image) goes to stdout, where the launch reads it back (``to=""``).
    redirect = f" {to}" if to else ""
    return f"{{ echo {shlex.quote(message)}{redirect}; exit 1; }}"


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


# mount image (docs/stack.md#mount): the stack image read-only here, /opt/buzz still an emptyDir
IMAGE_ROOT = "/opt/buzz-image"
# What the launch exec runs in the task image to link bin/ into the mount and write the digests.
IMAGE_TOOLS = ("mkdir", "ln", "cp", "chmod", "find", "sort", "readlink", "sha256sum")

# An absolute symlink inside the mounted image points into the image, not the container: follow
# a path's links with that rule (at most 8, as a loop guard) to the file they name in the mount.
_IN_IMAGE = (
    'in_image() { p=$1; n=0; while [ -L "$p" ] && [ "$n" -lt 8 ]; do t=$(readlink "$p") || return 1;'
    ' case "$t" in /*) p="$image$t" ;; *) p="${p%/*}/$t" ;; esac; n=$((n + 1)); done; printf \'%s\\n\' "$p"; }'
)


def _image_tools() -> str:
    tools = " ".join(IMAGE_TOOLS)
    return (f'for tool in {tools}; do command -v "$tool" >/dev/null 2>&1 || {{ echo "stack: the task image has'
            ' no $tool, which spec.stack.mount image runs there (mount copy needs none)"; exit 1; }; done')


def _sprig_linked(source: StackSource, root: str) -> str:
    bin_dir, binary, ca = f"{root}/bin", f'"$image"{shlex.quote(source.sprig_binary)}', f'"$image"{SPRIG_CA_BUNDLE}'
    links = " ".join(SPRIG_LINKS)
    no_binary = f"stack: no {source.sprig_binary} in image {source.image} (spec.stack.binaryPath)"
    return (
        f'sprig=$(in_image {binary}) && [ -f "$sprig" ] || {_fail(no_binary, "")}'
        f' && ca=$(in_image {ca}) && [ -f "$ca" ] || {_fail(f"stack: no {SPRIG_CA_BUNDLE} in image {source.image}", "")}'
        f' && mkdir -p {shlex.quote(bin_dir)} && ln -sfn "$sprig" {shlex.quote(f"{bin_dir}/{SPRIG_NAME}")}'
        f" && for name in {links}; do ln -sfn {SPRIG_NAME} {shlex.quote(bin_dir)}/$name || exit 1; done"
        f' && cp "$ca" {shlex.quote(f"{root}/ca-certificates.crt")}'
    )


def _folder_linked(source: StackSource, root: str) -> str:
    # bin/ mirrored as links (each file to its copy in the mount, each link as the same link),
    # everything else the folder ships copied: the CA bundle is appended to at launch
    # (spec.relay.caBundle), so it cannot stay read-only
    stack, bin_dir = f'"$image"{FOLDER_SOURCE}', shlex.quote(f"{root}/bin")
    return (
        f"[ -d {stack}/bin ] || {_fail(f'stack: no {FOLDER_SOURCE}/bin in image {source.image} (layout folder)', '')}"
        f" && mkdir -p {bin_dir}"
        f" && for e in {stack}/* {stack}/.[!.]* {stack}/..?*; do {{ [ -e \"$e\" ] || [ -L \"$e\" ]; }} || continue;"
        f' [ "$e" = {stack}/bin ] && continue; cp -R "$e" {shlex.quote(root)}/ || exit 1; done'
        f" && ( cd {stack}/bin && find . ! -type d | while IFS= read -r f; do"
        f' mkdir -p "{root}/bin/${{f%/*}}" || exit 1;'
        f' if [ -L "$f" ]; then ln -sfn "$(readlink "$f")" "{root}/bin/$f";'
        f' else ln -sfn {stack}/bin/"${{f#./}}" "{root}/bin/$f"; fi || exit 1; done )'
    )


def mount_install_command(source: StackSource, root: str = REMOTE_ROOT, image_root: str = IMAGE_ROOT) -> str:
    """The install for mount image, run by the launch exec in the task container: bin/ under
    ``root`` linked into the stack image mounted at ``image_root``, the CA bundle copied, the
    same checks and the same digests as the init container's copy. A refusal is one `stack: …`
    line on stdout and exit 1."""
    linked = _sprig_linked(source, root) if source.layout is StackLayout.SPRIG else _folder_linked(source, root)
    return (f"image={shlex.quote(image_root)}\n{_IN_IMAGE}\n{_image_tools()}\n"
            f"{{ {linked}; }} && {_finish(source, root, to='')}")


def read_manifest_command(source: StackSource) -> str:
    """What the launch reads the stack's digests with: the manifest the init container wrote
    (mount copy), or — mount image — the install run first unless a launch before this one
    already did it (a relaunch finds the manifest and reads it)."""
    if source.mount is StackMount.COPY:
        return READ_MANIFEST
    return f"{{ [ -s {STACK_MANIFEST} ] || ( {mount_install_command(source)}\n); }} && {READ_MANIFEST}"


def write_manifest(root: str = REMOTE_ROOT) -> str:
    """The snippet that lists bin/ under ``root`` with each file's sha256, sorted by path.

    sha256sum opens each path, so a symlink is hashed as the file it resolves to; a dangling one
    fails the install rather than leaving a stack that cannot start. Each distinct file is hashed
    once: the sprig layout's names all resolve to one 35 MB binary, which hashed once per name
    cost about 2 s of a pod's start (docs/stack.md#hashing). The cache is `$seen`, lines of
    <resolved path> then <sha256>: a path read line by line holds no newline, and a resolved
    path starts with "/", which a digest never does.
    """
    return (
        # $nl: a newline, for matching whole lines of $seen
        f"cd {shlex.quote(root)} && nl='\n' && seen=\"$nl\""
        " && find bin \\( -type f -o -type l \\) | LC_ALL=C sort"
        " | while IFS= read -r f; do"
        ' t=$(readlink -f "$f") || exit 1;'
        ' case "$seen" in *"$nl$t$nl"*) sum=${seen#*"$nl$t$nl"}; sum=${sum%%"$nl"*} ;;'
        ' *) sum=$(sha256sum "$t") || exit 1; sum=${sum%% *}; seen="$seen$t$nl$sum$nl" ;; esac;'
        ' printf "%s  %s\\n" "$sum" "$f";'
        f" done > {MANIFEST_NAME}.tmp && mv {MANIFEST_NAME}.tmp {MANIFEST_NAME}"
    )


WRITE_MANIFEST = write_manifest()


def install_command(source: StackSource) -> str:
    """The `sh -c` script of the `stack` init container for this source (mount copy)."""
    copy = _sprig(source) if source.layout is StackLayout.SPRIG else _folder(source)
    return f"{{ {copy}; }} && {_finish(source)}"


def _finish(source: StackSource, root: str = REMOTE_ROOT, to: str = ">&2") -> str:
    """What both mounts do once bin/ is in place: refuse a stack without buzz-acp, write the
    digests, make the directories any user writes."""
    bin_dir, logs, prompts = (shlex.quote(f"{root}/{sub}") for sub in ("bin", "logs", "prompts"))
    message = f"stack: image {source.image} (layout {source.layout.value}) installs no executable bin/{REQUIRED}"
    return (
        f"{{ [ -x {bin_dir}/{REQUIRED} ] || {_fail(message, to)}; }}"
        f" && {write_manifest(root)}"
        # logs/ and prompts/ world-writable: the task image may run as any user and writes there
        f" && mkdir -p {logs} {prompts} && chmod 0777 {logs} {prompts}"
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
