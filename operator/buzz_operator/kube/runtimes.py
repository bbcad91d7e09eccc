"""Which container runtimes mount `image` volumes (pure): what spec.stack.mount image needs of a
node (docs/stack.md#mount). The kubelet passes an image volume to the runtime over CRI; one that
does not implement it leaves the pod in ContainerCreating with the runtime's own error, so the
tests and benchmarks that need it read the nodes first and say when they cannot run."""

from __future__ import annotations

# The first release of each runtime that mounts them, by the name nodes report it under in
# status.nodeInfo.containerRuntimeVersion (containerd://2.2.9, cri-o://1.31.0).
IMAGE_VOLUME_RUNTIMES = {"containerd": (2, 1), "cri-o": (1, 31)}


def mounts_image_volumes(runtime_version: str) -> bool:
    """Whether a node whose runtime is ``runtime_version`` mounts image volumes."""
    name, _, version = runtime_version.partition("://")
    least = IMAGE_VOLUME_RUNTIMES.get(name)
    numbers = tuple(int(part) for part in version.split("-")[0].split(".")[:2] if part.isdigit())
    return least is not None and len(numbers) == 2 and numbers >= least
