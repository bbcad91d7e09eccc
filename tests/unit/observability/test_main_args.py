"""The console script's observability switches: metrics off unless asked (host runs share
ports), JSON or text logs."""

from __future__ import annotations

import pytest
from buzz_operator.main import parse_args


def test_metrics_are_off_by_default_and_take_an_address() -> None:
    assert parse_args([]).metrics == ""
    assert parse_args(["--metrics", "0.0.0.0:9090"]).metrics == "0.0.0.0:9090"


def test_log_format_is_text_or_json() -> None:
    assert parse_args([]).log_format == "text"
    assert parse_args(["--log-format", "json"]).log_format == "json"
    with pytest.raises(SystemExit):
        parse_args(["--log-format", "xml"])
