"""Tasks whose work needs the box's memory (docs/resources.md): hello-file's verifier behind a
command that wants HOG_MIB in a task that asks for TASK_MIB, as ConfigMap data (paths with
'__') for `spec.dataset.configMapRef`. Shared by tests/integration/operator/test_headroom.py
and bench/headroom.py.

- `oom-process`: the kernel kills only the command (cgroup v1's way, and v2's with the
  kubelet's singleProcessOOMKill): the container lives, nothing is saved, the score is 0.
- `oom-container`: the container goes down with the command, as cgroup v2's `memory.oom.group`
  (which the kubelet sets) takes it. On cgroup v1 the kernel kills one process, so the command
  first makes the container's init the kernel's choice (`oom_score_adj` 1000, which any process
  may raise). That decides only in a Guaranteed pod, whose other processes keep the score
  containerd gives them — 0 on the local cluster, whose containerd clamps to its own
  (`restrict_oom_score_adj`, hack/cluster-up.sh) — while a Burstable pod's start near 1000.
- `calm`: the same answer from a command that needs nothing: the control."""

from __future__ import annotations

from buzz_operator.api.sweep import DEFAULT_TASK_IMAGE_REGISTRY
from buzz_operator.dataset import builtin_dataset_path, load_dataset

from tests.support.cluster import ROOT

HOG_MIB, TASK_MIB = 640, 384
# touches every page, so the memory is resident and not the zero page
HOG = (f"python3 -c \"b = bytearray({HOG_MIB} * 2**20); b[::4096] = b'x' * ({HOG_MIB} * 256); "
       "print('Hello, world!')\"")
COMMANDS = {"oom-process": HOG, "oom-container": f"echo 1000 > /proc/1/oom_score_adj; {HOG}",
            "calm": "printf 'Hello, world!'"}
HUNGRY = ("oom-container", "oom-process")


def hungry_tasks() -> dict[str, str]:
    """Every task of COMMANDS as ConfigMap data: hello-file with the command to run."""
    return command_tasks(COMMANDS, memory_mib=TASK_MIB)


def slow_tasks(count: int, seconds: int, image: str | None = None) -> dict[str, str]:
    """``count`` tasks (`slow-1`, …) whose answer takes ``seconds``: long enough for a sweep's
    ticks to happen while they run (tests of warm pods)."""
    return command_tasks({f"slow-{n}": f"sleep {seconds}; printf 'Hello, world!'" for n in range(1, count + 1)},
                         image=image)


def command_tasks(commands: dict[str, str], *, memory_mib: int | None = None, image: str | None = None) -> dict[str, str]:
    """hello-file with a command to run, one task per entry of ``commands``, as ConfigMap data;
    its image pinned (``image``, else the one hack/images.sh builds for hello-file)."""
    source = ROOT / "tasks" / "hello-file"
    hello = next(t for t in load_dataset(builtin_dataset_path(), ["hello-file"], []) if t.name == "hello-file")
    image = image or hello.image_ref(DEFAULT_TASK_IMAGE_REGISTRY, "builtin")
    toml = (source / "task.toml").read_text()
    assert "memory_mb = 1024" in toml
    if memory_mib is not None:
        toml = toml.replace("memory_mb = 1024", f"memory_mb = {memory_mib}")
    toml = toml.replace("[environment]\n", f'[environment]\ndocker_image = "{image}"\n')
    data = {}
    for name, command in commands.items():
        data |= {
            f"{name}__task.toml": toml,
            f"{name}__instruction.md": f"Run `{command}` in a shell and save what it prints to `/app/hello.txt`.\n",
            f"{name}__environment__Dockerfile": (source / "environment" / "Dockerfile").read_text(),
            f"{name}__tests__test.sh": (source / "tests" / "test.sh").read_text(),
        }
    return data


def hello_image() -> str:
    """The image hack/images.sh builds for hello-file, as the builtin dataset names it."""
    hello = next(t for t in load_dataset(builtin_dataset_path(), ["hello-file"], []) if t.name == "hello-file")
    return hello.image_ref(DEFAULT_TASK_IMAGE_REGISTRY, "builtin")
