"""Leadership: which of the operator's replicas runs the handlers (docs/leadership.md)."""
