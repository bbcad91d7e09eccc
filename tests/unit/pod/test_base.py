"""The hardened pod base: what every pod the operator makes carries, and the pull-Secret seam."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buzz_operator.api.ownership import owner_reference
from buzz_operator.pod.base import KEEPALIVE, hardened_pod, task_image_container


def _pod(image_pull_secrets: Sequence[str] = ()) -> dict[str, Any]:
    task = task_image_container("task", "img", "IfNotPresent", resources={}, mounts=[])
    return hardened_pod(name="p", namespace="ns", labels={"a": "b"}, owner=owner_reference("BuzzTrial", "t", "u"),
                        containers=[task], grace_seconds=5, image_pull_secrets=image_pull_secrets)


def test_the_base_is_hardened_and_leaves_out_what_it_was_not_given() -> None:
    pod = _pod()
    spec = pod["spec"]
    assert spec["automountServiceAccountToken"] is False and spec["enableServiceLinks"] is False
    assert spec["restartPolicy"] == "Never" and spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    assert "initContainers" not in spec and "runtimeClassName" not in spec and "imagePullSecrets" not in spec
    assert spec["containers"][0]["command"] == ["sh", "-c", KEEPALIVE]
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "u"


def test_image_pull_secrets_are_named_in_the_pod() -> None:
    assert _pod(image_pull_secrets=["reg-a", "reg-b"])["spec"]["imagePullSecrets"] == [{"name": "reg-a"},
                                                                                       {"name": "reg-b"}]


def test_no_two_pods_share_a_nested_security_context() -> None:
    first, second = _pod(), _pod()
    first["spec"]["containers"][0]["securityContext"]["capabilities"]["add"].append("NET_RAW")
    assert "NET_RAW" not in second["spec"]["containers"][0]["securityContext"]["capabilities"]["add"]
