"""Where a trial's agent stack comes from (spec) and what it turned out to be (status).

A stack image is one of two layouts (docs/stack.md):

- ``sprig`` — Block's sprig image: one static multicall binary (``/usr/local/bin/sprig`` by
  default) that dispatches on argv[0]; the trial pod installs it as /opt/buzz/bin/sprig with
  the stack's names linked to it, and takes the CA bundle from the image's system trust store.
- ``folder`` — the files a stack ships already laid out under /stack: /stack/bin/* and
  /stack/ca-certificates.crt (the stand-in stack, and `make stack-image` of a folder of binaries).

Either layout reaches the pod one of two ways (``mount``, docs/stack.md#mount): ``copy``, an init
container copying the files into the /opt/buzz emptyDir, or ``image``, the stack image mounted
read-only beside it as an image volume and bin/ linked into it by the launch exec — the same
paths, the same digests, one container fewer to start.

The digests are what the image *contained*, read from the pod after install: an image
reference names a tag that can move, and buzz-acp carries a production base prompt that changes
behaviour without changing the condition hash, so results are keyed by these digests.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, ValidationInfo, field_validator

from buzz_operator.api.common import SpecModel, StatusModel
from buzz_operator.api.rules import rule, validations

DEFAULT_SPRIG_BINARY = "/usr/local/bin/sprig"
SHA256_HEX = r"^[0-9a-f]{64}$"


class StackLayout(StrEnum):
    SPRIG = "sprig"
    FOLDER = "folder"


class StackMount(StrEnum):
    COPY = "copy"
    IMAGE = "image"


class StackSource(
    SpecModel,
    json_schema_extra=validations(rule(
        "self.layout == 'sprig' || !has(self.binaryPath)",
        "spec.stack.binaryPath applies to layout sprig only (a folder image ships /stack/bin)",
        field_path=".binaryPath",
    )),
):
    """The agent stack image and how its files are laid out."""

    image: str = Field(min_length=1, description="Image holding the agent stack (buzz-acp, buzz-agent, …).")
    layout: StackLayout = Field(
        description=(
            "sprig: one multicall binary (binaryPath) installed as /opt/buzz/bin/sprig with buzz-acp, "
            "buzz-agent, buzz-dev-mcp, buzz, rg, tree, git-credential-nostr and git-sign-nostr linked to "
            "it, CA bundle from /etc/ssl/certs/ca-certificates.crt; folder: /stack/bin/* and "
            "/stack/ca-certificates.crt copied as they are."
        ),
        # bounded for the API server's estimate of the CEL rule that reads it
        json_schema_extra={"maxLength": max(len(member.value) for member in StackLayout)},
    )
    binary_path: str | None = Field(
        None,
        max_length=256,
        # it is spliced into the install script (quoted as well): a plain absolute path only
        pattern=r"^/[A-Za-z0-9._+/-]+$",
        description=f"sprig layout: path of the multicall binary in the image (default {DEFAULT_SPRIG_BINARY}).",
    )
    mount: StackMount = Field(StackMount.COPY, description=(
        "How the pod gets the stack: copy (an init container copies it into /opt/buzz; any runtime) or "
        "image (the image mounted read-only as an image volume at /opt/buzz-image and bin/ linked into it "
        "at launch: no init container; needs a runtime with image volumes, e.g. containerd >= 2.1, and sh, "
        "ln, cp, find, sort, readlink and sha256sum in the task image)."))

    @field_validator("binary_path")
    @classmethod
    def _binary_path_for_sprig(cls, path: str | None, info: ValidationInfo) -> str | None:
        # a field validator (layout is validated first) so the error names spec.stack.binaryPath
        if path is not None and info.data.get("layout") is not StackLayout.SPRIG:
            raise ValueError("applies to layout sprig only (a folder image ships /stack/bin)")
        return path

    @property
    def sprig_binary(self) -> str:
        return self.binary_path or DEFAULT_SPRIG_BINARY


def folder_stack(image: str) -> StackSource:
    """What the deprecated ``stackImage: <ref>`` has always meant."""
    return StackSource(image=image, layout=StackLayout.FOLDER)


class StackDigests(StatusModel):
    """The stack a pod installed: sha256 of every file under /opt/buzz/bin (symlinks resolved)."""

    digest: str = Field(
        pattern=SHA256_HEX,
        description="sha256 of the sorted manifest (/opt/buzz/stack-digests.txt): one value per stack.",
    )
    binaries: dict[str, str] = Field(
        default_factory=dict, description="Executable name under bin/ -> sha256 of its content."
    )


def stack_record(source: StackSource, digests: StackDigests | None) -> dict[str, object]:
    """``stack`` as lock.json, result.json and the bundle's summary.json write it: the image and
    layout asked for, and what was installed (digest and binaries null when nothing was read)."""
    return {
        "image": source.image,
        "layout": source.layout.value,
        "digest": digests.digest if digests is not None else None,
        "binaries": dict(sorted(digests.binaries.items())) if digests is not None else None,
    }


def pooled_stack(digest: str | None, known: set[str]) -> str | None:
    """The stack digest a trial's result is pooled under: its own. A trial whose pod never
    installed a stack (an image that never pulled, a pod never scheduled) ran no binary at all,
    so it joins the one stack its siblings ran — its 0 still counts there, as the seed counts
    launch failures — and stays apart (None) when they ran more than one."""
    if digest:
        return digest
    return next(iter(known)) if len(known) == 1 else None
