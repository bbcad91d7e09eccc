"""buzz-operator: Buzz agent-team benchmark sweeps as Kubernetes pods."""

__version__ = "0.1.0"
