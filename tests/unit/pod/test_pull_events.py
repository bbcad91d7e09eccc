"""The kubelet's pull Events as figures (pod/pull_events.py), on the kubelet's own words."""

from __future__ import annotations

import pytest
from buzz_operator.pod.pull_events import go_seconds, pulls


@pytest.mark.parametrize(("text", "seconds"), [
    ("1.234s", 1.234), ("850ms", 0.85), ("2m3.5s", 123.5), ("1h0m0s", 3600.0), ("12µs", 12e-6), ("nonsense", None),
    ("1.2s extra", None),
])
def test_go_durations(text: str, seconds: float | None) -> None:
    found = go_seconds(text)
    assert found == pytest.approx(seconds) if seconds is not None else found is None


def test_pulled_and_present_images_are_counted_once() -> None:
    # as the local cluster's kubelet 1.37 wrote them (2026-12-05)
    events = [
        {"reason": "Pulling", "message": 'Pulling image "192.0.2.2:5443/buzz/stack:dev"'},
        {"reason": "Pulled", "message": 'Successfully pulled image "192.0.2.2:5443/buzz/stack:dev" in 1.234s '
                                        '(1.234s including waiting). Image size: 52428800 bytes.'},
        {"reason": "Pulled", "message": 'Successfully pulled image "192.0.2.2:5443/buzz/stack:dev" in 1.234s '
                                        '(1.234s including waiting). Image size: 52428800 bytes.'},
        {"reason": "Pulled", "message": 'Successfully pulled image "192.0.2.2:5443/buzz-tasks/t:1" in 850ms '
                                        '(2.1s including waiting). Image size: 1 bytes.'},
        {"reason": "Pulled", "message": 'Container image "192.0.2.2:5443/buzz/operator:dev" already present on '
                                        'machine and can be accessed by the pod'},
        {"reason": "Started", "message": "Started container task"},
    ]
    found = pulls(events)
    assert (found.seconds, found.pulled, found.present) == (2.084, 2, 1)
    assert pulls([]).pulled == 0
