"""The election's I/O: the Lease read and written, the standby's liveness endpoint (docs/leadership.md)."""
