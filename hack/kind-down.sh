#!/bin/bash
# make kind-down: the kind cluster make kind-up made, removed (kind takes its nodes' volumes with
# them) with the network kind leaves behind and the cluster's state under $RUN/kind. The
# images the project built stay in the cache ($CACHE/kind) for the next kind-up.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CLUSTER=${BUZZ_KIND_CLUSTER:-buzz}
command -v docker >/dev/null 2>&1 || command -v podman >/dev/null 2>&1 || { log "no container engine: no kind cluster to remove"; exit 0; }
engine=$(kind_engine)
kind_engine_env "$engine"
KIND=$(bash "$(dirname "$0")/kind.sh")
if "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  log "kind delete cluster $CLUSTER"
  "$KIND" delete cluster --name "$CLUSTER" --kubeconfig "$RUN/kind/kubeconfig"
fi
# kind makes a network for its nodes and keeps it for the next cluster; with no node left on it,
# it goes too
if "$engine" network inspect kind >/dev/null 2>&1 \
   && [ -z "$("$engine" ps -aq --filter network=kind 2>/dev/null)" ]; then
  "$engine" network rm kind >/dev/null
fi
rm -rf "$RUN/kind"
log "kind cluster $CLUSTER removed"
