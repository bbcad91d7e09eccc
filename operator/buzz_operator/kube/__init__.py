"""Thin async adapters over the Kubernetes API (kubernetes_asyncio): the client, exec with
stdin/stdout/stderr over the websocket, tar upload/download over exec, events, and object
helpers that adopt on 409. No corridor logic lives here; trial/runtime*.py composes these."""
