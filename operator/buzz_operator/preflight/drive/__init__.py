"""The preflight's I/O: creates the canary pod, dials the relay and Postgres, and runs the pure
checks of preflight/ on what it found (runner.py)."""
