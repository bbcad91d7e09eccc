"""What the operator tells the outside: Prometheus metrics, Kubernetes Events, JSON logs.

Pure builders (which series, which events, which log fields) live apart from the edges that
serve them (the metrics HTTP server, kopf's event poster, the root log handler), so tests can
check what is said without a cluster.
"""
