"""How the trial pod reaches the relay (docs/relay-urls.md): a loopback relay URL gets the
`forwarder` sidecar listening on the very address agents dial; a URL pods can route to is dialled
directly, and the pod has no forwarder at all."""

from __future__ import annotations

from typing import Any

import pytest
from buzz_operator.api.relay import is_loopback_url
from buzz_operator.api.trial import BuzzTrialSpec
from buzz_operator.pod.trial_pod import build_trial_pod, forwarder_listen_address

from tests.unit.api import cel_cases


def _spec() -> BuzzTrialSpec:
    return BuzzTrialSpec.model_validate(cel_cases.trial()["spec"])  # a valid trial as a sweep plans it


def _pod(listen: str | None, target: str | None) -> dict[str, Any]:
    return build_trial_pod(trial_name="t", trial_uid="uid-1", namespace="bench", retry=0, spec=_spec(),
                           trial_labels={}, relay_listen=listen, relay_target=target)


def _init_names(pod: dict[str, Any]) -> list[str]:
    return [c["name"] for c in pod["spec"]["initContainers"]]


def test_a_loopback_url_gets_the_forwarder_sidecar() -> None:
    pod = _pod(forwarder_listen_address("ws://localhost:3600"), "10.96.77.10:3600")
    [forwarder] = [c for c in pod["spec"]["initContainers"] if c["name"] == "forwarder"]
    assert forwarder["restartPolicy"] == "Always"  # a native sidecar
    assert forwarder["command"] == ["relay-forwarder", "127.0.0.1:3600", "10.96.77.10:3600"]
    assert forwarder["securityContext"]["runAsUser"] == 65532
    assert forwarder["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_a_direct_url_has_no_forwarder() -> None:
    pod = _pod(None, None)
    assert "forwarder" not in _init_names(pod)
    assert all("relay-forwarder" not in " ".join(c.get("command", []))
               for c in pod["spec"]["initContainers"] + pod["spec"]["containers"])
    # the rest of the pod is the same pod
    with_forwarder = _pod("127.0.0.1:3600", "10.96.77.10:3600")
    assert pod["spec"]["containers"] == with_forwarder["spec"]["containers"]
    assert _init_names(with_forwarder) == [*_init_names(pod), "forwarder"]


def test_listen_and_target_come_together() -> None:
    with pytest.raises(ValueError, match="come together"):
        _pod("127.0.0.1:3600", None)


@pytest.mark.parametrize(
    ("url", "listen"),
    [
        ("ws://localhost:3600", "127.0.0.1:3600"),
        ("ws://LOCALHOST.:3600/x", "127.0.0.1:3600"),
        ("ws://127.0.0.1:3600", "127.0.0.1:3600"),
        ("ws://127.0.0.2:4000", "127.0.0.2:4000"),  # agents dial 127.0.0.2: the forwarder listens there
        ("ws://[::1]:3600", "[::1]:3600"),
        ("wss://localhost:8443?x=1", "127.0.0.1:8443"),
    ],
)
def test_the_forwarder_listens_where_agents_dial(url: str, listen: str) -> None:
    assert is_loopback_url(url)
    assert forwarder_listen_address(url) == listen


@pytest.mark.parametrize(
    "url",
    ["ws://relay.example.com:3600", "wss://relay.example.com", "ws://10.96.0.20:3600", "wss://[fd00::1]:443",
     "ws://localhost.example:3600", "ws://128.0.0.1:3600"],
)
def test_routable_urls_are_dialled_directly(url: str) -> None:
    assert not is_loopback_url(url)
    with pytest.raises(ValueError, match="not a loopback address"):
        forwarder_listen_address(url)
