"""Fixtures for the services of the local stack. Each starts its service through the project's own
hack/ script when it is not running yet (idempotent), so a single test can be run by hand too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = Path(os.environ.get("BUZZ_RUN", "/var/tmp/buzz-operator"))


def _hack(*args: str) -> str:
    return subprocess.run(
        ["bash", str(ROOT / "hack" / args[0]), *args[1:]],
        check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL,
    ).stdout.strip()


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    """DSN of the throwaway Postgres (hack/postgres.sh). Each test should use its own schema or
    database objects keyed by a random id; the cluster is shared by the session."""
    if dsn := os.environ.get("BUZZ_PG_DSN"):
        return dsn
    _hack("postgres.sh", "up")
    return _hack("postgres.sh", "dsn")
