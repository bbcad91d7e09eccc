"""The chart's `stack` value reaches the operator as the environment OperatorSettings reads, the
deprecated `stackImage` still means a folder image, and a bad combination fails the render."""

from __future__ import annotations

from typing import Any

import pytest
from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.sweep.settings import OperatorSettings

from tests.unit.chart.chartlib import CHART, helm, of_kind, render


def _stack_env(values: dict[str, Any] | None = None) -> dict[str, str]:
    [deployment] = of_kind(render(values=values), "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if e["name"].startswith("BUZZ_STACK")}


def test_the_default_is_the_stand_in_folder_stack() -> None:
    env = _stack_env()
    assert env == {"BUZZ_STACK_IMAGE": "docker.io/buzz/stack:dev", "BUZZ_STACK_LAYOUT": "folder",
                   "BUZZ_STACK_MOUNT": "copy"}
    assert OperatorSettings.from_env(env).stack == StackSource(image="docker.io/buzz/stack:dev",
                                                               layout=StackLayout.FOLDER, mount=StackMount.COPY)


def test_the_stack_mounted_as_an_image_volume() -> None:
    env = _stack_env({"stack": {"image": "ghcr.io/block/sprig:1", "layout": "sprig", "mount": "image"}})
    assert env["BUZZ_STACK_MOUNT"] == "image"
    assert OperatorSettings.from_env(env).stack.mount is StackMount.IMAGE


def test_a_sprig_stack_with_its_binary_path() -> None:
    env = _stack_env({"stack": {"image": "ghcr.io/block/sprig:1", "layout": "sprig", "binaryPath": "/usr/bin/sprig"}})
    assert OperatorSettings.from_env(env).stack == StackSource(
        image="ghcr.io/block/sprig:1", layout=StackLayout.SPRIG, binary_path="/usr/bin/sprig")


def test_the_deprecated_stack_image_is_a_folder_image() -> None:
    env = _stack_env({"stackImage": "example.org/my-stack:1"})
    assert env == {"BUZZ_STACK_IMAGE": "example.org/my-stack:1", "BUZZ_STACK_LAYOUT": "folder"}


@pytest.mark.parametrize(("args", "complaint"), [
    (["--set", "stack.layout=tarball"], "stack.layout"),
    (["--set", "stack.binaryPath=/usr/bin/sprig"], "stack.binaryPath applies to stack.layout sprig only"),
    (["--set", "stack.binaryPath=relative/sprig"], "binaryPath"),
    (["--set", "stack.imgae=x"], "Additional property imgae is not allowed"),
    (["--set", "stack.mount=overlay"], "stack.mount"),
], ids=["layout", "binary-path-on-folder", "binary-path-relative", "typo", "mount"])
def test_bad_stack_values_fail_the_render_naming_the_key(args: list[str], complaint: str) -> None:
    result = helm("template", "rel", str(CHART), *args, check=False)
    assert result.returncode != 0 and complaint in result.stderr, result.stderr


@pytest.mark.parametrize(("env", "named"), [
    ({"BUZZ_STACK_LAYOUT": "tarball"}, "BUZZ_STACK_LAYOUT"),
    ({"BUZZ_STACK_LAYOUT": "folder", "BUZZ_STACK_BINARY_PATH": "/usr/bin/sprig"}, "BUZZ_STACK_BINARY_PATH"),
    ({"BUZZ_STACK_LAYOUT": "sprig", "BUZZ_STACK_BINARY_PATH": "sprig; rm -rf /"}, "BUZZ_STACK_BINARY_PATH"),
    ({"BUZZ_STACK_MOUNT": "overlay"}, "BUZZ_STACK_MOUNT"),
])
def test_a_bad_stack_environment_stops_the_operator_naming_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        OperatorSettings.from_env(env)
