"""buzzctl over the bundles `make demo` left on this machine (written by the operator, not by a
test builder). A fresh machine has none until `make demo` has run: the test says so and skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.real_bundles import check_sweep_results

DEMO_STORE = Path("/var/lib/buzz-operator/bundles")


@pytest.mark.parametrize("sweep", ["demo-oracle", "demo-toplevel"])
def test_buzzctl_over_the_demo_bundles(sweep: str, tmp_path: Path) -> None:
    if not any((DEMO_STORE / sweep).glob("*/result.json")):
        pytest.skip(f"no committed demo bundles under {DEMO_STORE / sweep}: run `make demo` first")
    document = check_sweep_results(DEMO_STORE.as_uri(), sweep, tmp_path)
    (row,) = document["conditions"]
    if sweep == "demo-oracle":
        assert row["pass_rate"] == 1.0 and document["failures"] == []
    else:
        # the toplevel stand-in answers outside the user's thread: reply-to-thread fails on that alone
        assert {f["task"] for f in document["failures"]} == {"reply-to-thread"}
        assert {f["reason"] for f in document["failures"]} == {"failed reply_to_thread"}
