"""DSNs for another database, as the host and as pods reach it."""

from __future__ import annotations

from buzz_operator.dev.localstack import with_database

DSN = "postgresql://u:p@127.0.0.1:55432/postgres?sslmode=disable"


def test_same_host_other_database() -> None:
    assert with_database(DSN, "relay") == "postgresql://u:p@127.0.0.1:55432/relay?sslmode=disable"


def test_other_host_keeps_the_port_unless_told() -> None:
    assert with_database(DSN, "relay", host="10.0.0.5") == "postgresql://u:p@10.0.0.5:55432/relay?sslmode=disable"
    assert with_database(DSN, "relay", host="10.96.0.9", port=5432).startswith("postgresql://u:p@10.96.0.9:5432/relay")
    assert with_database("postgresql://u@db/x", "y", host="h") == "postgresql://u@h:5432/y"
