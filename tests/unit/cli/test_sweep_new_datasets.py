"""buzzctl sweep new --dataset: Harbor's registry and git-repository forms (docs/harbor.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.cli.sweep_new import SweepNewError, SweepRequest, build

ROOT = Path(__file__).resolve().parents[3]


def dataset(value: str) -> dict[str, object]:
    request = SweepRequest(name="tb", manifest=ROOT / "manifests" / "standin-team.yaml",
                           endpoints=ROOT / "manifests" / "endpoints" / "standin.json", dataset=value)
    return build(request, environ={"STANDIN_API_KEY": "standin-" + "9f" * 16}).sweep["spec"]["dataset"]


@pytest.mark.parametrize("value, expected", [
    ("registry:tb@2.0:https://example.org/registry.json",
     {"registry": {"name": "tb@2.0", "url": "https://example.org/registry.json"}}),
    ("registry:tb:configmap:my-registry", {"registry": {"name": "tb", "configMapRef": {"name": "my-registry",
                                                                                         "key": "registry.json"}}}),
    ("package:org/tasks@v1", {"package": {"name": "org/tasks@v1", "gitBase": "https://github.com", "path": "tasks"}}),
])
def test_harbor_forms_become_the_spec(value: str, expected: dict[str, object]) -> None:
    assert dataset(value) == expected


@pytest.mark.parametrize("value", ["registry:tb", "registry:tb:ftp://x", "registry:tb:configmap:", "package:"])
def test_incomplete_forms_are_refused_naming_the_option(value: str) -> None:
    with pytest.raises(SweepNewError, match=r"--dataset: .* is not builtin, configmap:NAME"):
        dataset(value)


def test_a_package_that_is_not_org_name_is_refused_by_the_spec() -> None:
    with pytest.raises(SweepNewError, match=r"spec\.dataset\.package\.name"):
        dataset("package:just-a-name")
