"""file:// storage is refused where bundles would not outlive the operator's pod (the chart's
BUZZ_EPHEMERAL_PATHS), naming what to do instead; nothing is refused without the variable."""

from __future__ import annotations

import pytest
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import resolve
from buzz_operator.storage.durability import EPHEMERAL_PATHS_ENV, ephemeral_paths, ephemeral_storage_problem

POD = ("/tmp", "/work")


@pytest.mark.parametrize(
    ("url", "roots", "refused"),
    [
        ("file:///var/lib/buzz-operator/bundles", ("/",), True),  # the chart without a claim: no durable volume
        ("file:///tmp/bundles", POD, True),
        ("file:///work", POD, True),
        ("file:///var/lib/buzz-operator/bundles/../../../../tmp/x", POD, True),  # folded as the filesystem will
        ("file:///tmp%2Fx", POD, True),  # percent-encoded as open_store decodes it
        ("file:///tmpfoo/bundles", POD, False),  # a sibling, not under /tmp
        ("file:///var/lib/buzz-operator/bundles", POD, False),  # the claim's mount
        ("s3://bucket/prefix", ("/",), False),
        ("file:///anything", (), False),  # unset: an operator on a host
    ],
)
def test_ephemeral_storage_problem(url: str, roots: tuple[str, ...], refused: bool) -> None:
    problem = ephemeral_storage_problem(url, roots)
    assert (problem is not None) is refused, problem
    if problem:
        assert problem.startswith(url) and "s3://" in problem and "bundles.existingClaim" in problem


def test_the_variable_is_colon_separated_absolute_paths() -> None:
    assert ephemeral_paths({EPHEMERAL_PATHS_ENV: "/tmp:/work/:relative: /x "}) == ("/tmp", "/work", "/x")
    assert ephemeral_paths({}) == ()


async def test_the_sweep_is_refused_naming_spec_storage_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EPHEMERAL_PATHS_ENV, "/")
    spec = BuzzSweepSpec.model_validate({
        "condition": {"inline": {}}, "dataset": {"builtin": {}},
        "relay": {"url": "ws://localhost:3600", "serviceRef": {"name": "r", "port": 3600},
                  "ownerKeySecretRef": {"name": "o", "key": "k"}, "postgresDsnSecretRef": {"name": "o", "key": "d"}},
    })  # no spec.storage: the default file:///var/lib/buzz-operator/bundles is checked too
    with pytest.raises(InputError) as refused:
        await resolve.open_sweep_store(None, "ns", spec)  # type: ignore[arg-type]  # refused before any API call
    assert refused.value.field == "spec.storage.url"
    assert "file:///var/lib/buzz-operator/bundles: the operator's pod has no durable volume" in str(refused.value)
