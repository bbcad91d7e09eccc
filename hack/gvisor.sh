#!/bin/bash
# gVisor on the local cluster (docs/isolation.md#gvisor): the runtime handler `runsc` in the
# cluster's containerd and the RuntimeClass `gvisor` that names it. hack/cluster-up.sh runs both
# steps; `make gvisor` runs them on a cluster that is up (the handler needs a containerd restart,
# so on a running cluster it says to run cluster-down and cluster-up instead).
#   gvisor.sh containerd <config.toml>   build runsc and its shim, add the handler to the config
#   gvisor.sh runtimeclass               create (or keep) the RuntimeClass gvisor
#   gvisor.sh status                     say whether the handler and the RuntimeClass are there
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
RUNSC_ROOT=$RUN/containerd/runsc
RUNSC_CONFIG=$RUN/containerd/runsc.toml

containerd_config() {
  local config=$1 bin
  bash "$HERE/build-gvisor.sh"
  bin=$(bash "$HERE/build-gvisor.sh" path)
  mkdir -p "$RUNSC_ROOT" "$RUN/logs/runsc"
  # The shim's own options (gVisor pkg/shim/v1/runsc/options.go): the runsc it drives, where it
  # keeps state, where it logs. The sandbox runs on systrap, gVisor's default platform, which needs
  # no KVM; its network is gVisor's own stack over the pod's interface (the CNI bridge's veth).
  cat > "$RUNSC_CONFIG" <<TOML
binary_name = "$bin/runsc"
root = "$RUNSC_ROOT"
log_path = "$RUN/logs/runsc/%ID%.shim.log"
log_level = "info"

[runsc_config]
  platform = "systrap"
  debug-log = "$RUN/logs/runsc/%ID%/"
TOML
  grep -q "runtimes.runsc\]" "$config" && return 0
  # containerd 2.x writes config version 3 (the CRI runtime plugin), Debian's 1.7 version 2
  local plugin="plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc"
  grep -q '^version = 3' "$config" || plugin='plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc'
  cat >> "$config" <<TOML

# gVisor (hack/gvisor.sh): the RuntimeClass gvisor's handler
[$plugin]
  runtime_type = "io.containerd.runsc.v1"
  runtime_path = "$bin/containerd-shim-runsc-v1"

[$plugin.options]
  TypeUrl = "io.containerd.runsc.v1.options"
  ConfigPath = "$RUNSC_CONFIG"
TOML
}

runtimeclass() {
  kc apply -f - >/dev/null <<YAML
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
  labels: {app.kubernetes.io/managed-by: buzz-operator-local-cluster}
handler: runsc
YAML
  log "RuntimeClass gvisor (handler runsc) is there"
}

case "${1:-}" in
  containerd) containerd_config "${2:?gvisor.sh containerd <config.toml>}" ;;
  runtimeclass) runtimeclass ;;
  status)
    grep -q "runtimes.runsc\]" "$RUN/containerd/config.toml" 2>/dev/null \
      && log "containerd has the runsc handler" || log "containerd has no runsc handler (cluster-down, cluster-up)"
    kc get runtimeclass gvisor >/dev/null 2>&1 && log "RuntimeClass gvisor exists" || log "no RuntimeClass gvisor" ;;
  *) die "usage: gvisor.sh containerd <config.toml> | runtimeclass | status" ;;
esac
