"""buzzctl sweep watch in a real terminal (tmux) against the local apiserver: a BuzzSweep and its
BuzzTrials whose status the test writes, one trial's pod really unschedulable (it asks for more
CPU than the node has, so the scheduler reports why). The screens are printed (run with -s)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube.client import connect

BUZZCTL = Path(sys.executable).with_name("buzzctl")
MERGE = "application/merge-patch+json"
SHA = "ab" * 32


def sweep_body(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "BuzzSweep",
        "metadata": {"name": name},
        "spec": {
            "condition": {"configMapRef": {"name": "none"}},
            "dataset": {"builtin": {}},
            "attempts": 2,
            "parallelism": 2,
            "suspend": True,  # nothing may act on it; also shown as a reason to wait
            "budget": {"maxCostUSD": 2.0},
            "relay": {
                "url": "ws://localhost:3600",
                "serviceRef": {"name": "relay", "port": 3600},
                "ownerKeySecretRef": {"name": "relay", "key": "owner-key"},
                "postgresDsnSecretRef": {"name": "relay", "key": "postgres-dsn"},
            },
        },
    }


def trial_body(sweep: str, name: str, task: str, attempt: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "BuzzTrial",
        "metadata": {"name": name, "labels": {f"{GROUP}/sweep": sweep}},
        "spec": {
            "sweepName": sweep, "task": task, "taskDigest": SHA, "attempt": attempt, "conditionHash": SHA,
            "image": "docker.io/buzz-tasks/none:1", "stackImage": "docker.io/buzz/stack:dev",
            "operatorImage": "docker.io/buzz/operator:dev", "resources": {"cpus": 1, "memoryMB": 256},
            "deadlines": {"scheduleSeconds": 60, "setupSeconds": 60, "agentSeconds": 60, "agentSource": "task",
                          "collectSeconds": 60, "verifierSeconds": 60, "uploadSeconds": 60},
        },
    }  # fmt: skip


def now(offset: float = 0.0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset))


async def write_objects(namespace: str, sweep: str) -> None:
    async with await connect() as kube:
        custom = kube.custom
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "buzzsweeps", sweep_body(sweep)
        )
        await custom.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, "buzzsweeps", sweep, {"status": {
            "conditionShort": "standin-team@6ef824b8", "total": 4, "pending": 1, "running": 2, "succeeded": 1,
            "costUSD": {"floor": 0.25, "ceiling": 0.5}, "meanReward": 1.0,
            "waiting": {"reason": "ParallelismLimit", "message": "1 trial waits: parallelism 2 reached"},
        }}, _content_type=MERGE)  # fmt: skip
        for name, task, attempt, status in (
            (f"{sweep}-run", "hello-file", 1, {"phase": "Running", "phaseTimes": {"running": now(-75)}}),
            (f"{sweep}-pend", "user-mention", 1, {"phase": "Launching", "pod": f"{sweep}-pend-0",
                                                  "phaseTimes": {"launching": now(-5)}}),
            (f"{sweep}-done", "hello-file", 2, {"phase": "Succeeded", "reward": 1.0}),
        ):  # fmt: skip
            await custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, "buzztrials", trial_body(sweep, name, task, attempt)
            )
            await custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, namespace, "buzztrials", name, {"status": status}, _content_type=MERGE
            )
        # a real pod the scheduler cannot place: the node has nowhere near 500 CPUs
        await kube.core.create_namespaced_pod(namespace, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{sweep}-pend-0"},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.6", "imagePullPolicy": "Never",
                                     "resources": {"requests": {"cpu": "500"}}}]},
        })  # fmt: skip


async def finish(namespace: str, sweep: str) -> None:
    async with await connect() as kube:
        await kube.custom.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, "buzzsweeps", sweep, {"status": {
            "pending": 0, "running": 0, "succeeded": 4, "waiting": None,
            "conditions": [{"type": "Complete", "status": "True", "reason": "AllTrialsFinished",
                            "message": "4 of 4 trials finished", "lastTransitionTime": now()}],
        }}, _content_type=MERGE)  # fmt: skip
        for name in (f"{sweep}-run", f"{sweep}-pend"):
            await kube.custom.patch_namespaced_custom_object_status(
                GROUP,
                VERSION,
                namespace,
                "buzztrials",
                name,
                {"status": {"phase": "Succeeded"}},
                _content_type=MERGE,
            )


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def wait_for_screen(session: str, predicate: Callable[[str], bool], timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if predicate(screen):
            return screen
        time.sleep(0.3)
    raise AssertionError(f"screen never matched:\n{screen}")


def test_watch_in_a_terminal(namespace: str, kubeconfig: str) -> None:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is missing: hack/deps.sh installs it")
    sweep = "watched"
    asyncio.run(write_objects(namespace, sweep))
    session = f"buzzctl-watch-{uuid.uuid4().hex[:8]}"
    command = (
        f"env -u COLUMNS -u LINES KUBECONFIG={kubeconfig} {BUZZCTL} sweep watch {sweep} -n {namespace} --interval 0.5; "
        "echo BUZZCTL-EXIT=$?; sleep 60"
    )
    tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", command)
    try:
        running = wait_for_screen(session, lambda s: "Unschedulable" in s and "active trials" in s)
        print(f"\n--- sweep watch, running ---\n{running}")
        assert "1/4 done" in running and "pending 1, running 2, succeeded 1" in running
        assert "$0.2500–$0.5000 of $2.00 budget" in running
        # the Running trial's age counts from its phaseTimes.running, written 75 s in the past
        assert re.search(rf"{sweep}-run .* Running .* [1-9]m[0-5][0-9]s", running)
        assert "waiting: Suspended: spec.suspend is true" in running
        assert "waiting: ParallelismLimit: 1 trial waits: parallelism 2 reached" in running
        assert "Insufficient cpu" in running  # the scheduler's own message, from the pod
        asyncio.run(finish(namespace, sweep))
        done = wait_for_screen(session, lambda s: "BUZZCTL-EXIT=" in s)
        print(f"--- sweep watch, finished ---\n{done}")
        assert "BUZZCTL-EXIT=0" in done and "Complete: 4 of 4 trials finished" in done and "4/4 done" in done
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def test_watch_of_a_missing_sweep_is_a_user_error(namespace: str, kubeconfig: str) -> None:
    done = subprocess.run([str(BUZZCTL), "sweep", "watch", "nope", "-n", namespace, "--once"],
                          capture_output=True, text=True, env={**os.environ, "KUBECONFIG": kubeconfig})  # fmt: skip
    assert (
        done.returncode == 1
        and done.stderr.strip() == f"error: no BuzzSweep 'nope' in namespace {namespace!r}"
    )
