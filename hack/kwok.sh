#!/bin/bash
# kwok $KWOK_VERSION (sigs.k8s.io/kwok) beside the local cluster: fake nodes the real kube-scheduler
# places pods on, and whose pods kwok moves through their lifecycle (Pending -> Running, deleted when
# asked) with no container behind them — for benchmarks at more pods than one node holds
# (bench/kwok.py, docs/local-cluster.md#fake-nodes).
#   hack/kwok.sh build        build the kwok binary from the Go module proxy (cached by version)
#   hack/kwok.sh up           start kwok as a host process against the local apiserver (idempotent)
#   hack/kwok.sh nodes N      make the fake nodes kwok-0..kwok-(N-1) exist (and no more)
#   hack/kwok.sh down         delete the fake nodes, then stop kwok
#   hack/kwok.sh status       running or not, and how many fake nodes are Ready
# kwok manages only nodes labelled type=kwok; the fake nodes are tainted kwok.x-k8s.io/node=fake
# (NoSchedule), so nothing lands on them that does not tolerate it. cluster-down stops kwok too.
# Cold build: about 4 minutes on 2 cores.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
KWOK_VERSION=${BUZZ_KWOK_VERSION:-0.8.0}
KW=$CACHE/kwok
KW_BIN=$KW/v$KWOK_VERSION/kwok
KW_STAGES=$KW/v$KWOK_VERSION/stages.yaml
KW_LOG=$RUN/logs/kwok.log
NODE_LABEL=type=kwok
NODE_TAINT_KEY=kwok.x-k8s.io/node
# what each fake node offers the scheduler; pods are counted too (max-pods of a real kubelet)
NODE_CPU=${BUZZ_KWOK_NODE_CPU:-64}
NODE_MEMORY=${BUZZ_KWOK_NODE_MEMORY:-256Gi}
NODE_PODS=${BUZZ_KWOK_NODE_PODS:-110}

build() {
  [ -x "$KW_BIN" ] && return 0
  log "building kwok v$KWOK_VERSION from the Go module proxy (cold: about 4 minutes on 2 cores)"
  go_tool_build kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok "$KW_BIN" "$KW" 2000
  stages
  log "kwok v$KWOK_VERSION built: $KW_BIN"
}

# The kwok binary has no stages of its own: kwokctl's default set, from the same module — nodes
# initialized at once and kept alive by their lease (status refreshed every 10 minutes), pods
# made Running at once and finished when deleted.
stages() {
  [ -s "$KW_STAGES" ] && return 0
  use_go
  local dir; dir=$(cd "$KW/src" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) || die "the kwok module is not in the module cache; run 'hack/kwok.sh build'"
  local f
  for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
           pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    [ -f "$dir/kustomize/stage/$f.yaml" ] || die "kwok v$KWOK_VERSION has no stage $f"
    cat "$dir/kustomize/stage/$f.yaml"; echo "---"
  done > "$KW_STAGES.tmp"
  mv "$KW_STAGES.tmp" "$KW_STAGES"
}

running() { pid_alive kwok; }

up() {
  need_root
  kc get --raw /readyz >/dev/null 2>&1 || die "the local cluster is not running: 'make cluster-up' first"
  mkdir -p "$KW"
  exec 9>>"$KW/up.lock"
  flock 9
  build
  stages
  running && return 0
  mkdir -p "$RUN/pids" "$RUN/logs"
  # kwok's own built-in stages (node-initialize, node-heartbeat, pod-ready, pod-delete); only
  # nodes labelled type=kwok are its, so the real node and its pods are never touched. Its
  # server (metrics, healthz) listens on loopback only, on a port of the services' private range.
  setsid "$KW_BIN" --kubeconfig "$KUBECONFIG_PATH" --config "$KW_STAGES" --manage-all-nodes=false \
    --node-lease-duration-seconds 40 \
    --manage-nodes-with-label-selector "$NODE_LABEL" \
    --node-ip 10.254.0.1 --cidr 10.254.0.0/16 \
    --server-address 127.0.0.1:${BUZZ_KWOK_PORT:-10247} \
    >"$KW_LOG" 2>&1 < /dev/null 9>&- &   # not the up lock: it would hold it for its life
  echo $! > "$RUN/pids/kwok.pid"
  local i
  for i in $(seq 1 50); do
    running || { tail -20 "$KW_LOG" >&2; die "kwok exited at start; log in $KW_LOG"; }
    curl -fsS "http://127.0.0.1:${BUZZ_KWOK_PORT:-10247}/healthz" >/dev/null 2>&1 && { log "kwok v$KWOK_VERSION running (log $KW_LOG)"; return 0; }
    sleep 0.2
  done
  log "kwok v$KWOK_VERSION started (its health endpoint did not answer yet; log $KW_LOG)"
}

node_yaml() {  # node_yaml NAME
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {type: kwok, kubernetes.io/hostname: $1, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
  annotations: {node.alpha.kubernetes.io/ttl: "0", kwok.x-k8s.io/node: fake}
spec:
  taints: [{key: $NODE_TAINT_KEY, value: fake, effect: NoSchedule}]
status:
  allocatable: {cpu: "$NODE_CPU", memory: $NODE_MEMORY, pods: "$NODE_PODS", ephemeral-storage: 1Ti}
  capacity: {cpu: "$NODE_CPU", memory: $NODE_MEMORY, pods: "$NODE_PODS", ephemeral-storage: 1Ti}
EOF
}

nodes() {  # nodes N: kwok-0..kwok-(N-1) exist and Ready, and no other fake node
  local n=${1:?nodes N}
  [[ "$n" =~ ^[0-9]+$ ]] || die "nodes: $n is not a count"
  running || die "kwok is not running: 'hack/kwok.sh up' first"
  local i docs=""
  for i in $(seq 0 $((n - 1))); do docs+=$(node_yaml "kwok-$i")$'\n---\n'; done
  [ "$n" -gt 0 ] && { printf '%s' "$docs" | kc apply -f - >/dev/null || die "creating $n fake nodes failed"; }
  for name in $(kc get nodes -l "$NODE_LABEL" -o name); do
    i=${name#node/kwok-}
    if ! [[ "$i" =~ ^[0-9]+$ ]] || [ "$i" -ge "$n" ]; then kc delete "$name" --wait=false >/dev/null; fi
  done
  for i in $(seq 1 120); do
    local ready
    ready=$(kc get nodes -l "$NODE_LABEL" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True || true)
    [ "$ready" -ge "$n" ] && { log "$n fake nodes Ready"; return 0; }
    sleep 0.5
  done
  die "only $ready of $n fake nodes became Ready in 60 s; log in $KW_LOG"
}

down() {
  if kc get --raw /readyz >/dev/null 2>&1; then
    kc delete nodes -l "$NODE_LABEL" --wait=false >/dev/null 2>&1 || true
    # pods bound to a fake node have no kubelet to finish them: kwok does, while it runs, so it
    # stops only once they are gone
    local i
    for i in $(seq 1 120); do
      [ -z "$(kc get pods -A --field-selector spec.nodeName!=,status.phase!=Succeeded -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' 2>/dev/null | grep '^kwok-' || true)" ] && break
      sleep 0.5
    done
  fi
  if running; then
    local p; p=$(cat "$RUN/pids/kwok.pid")
    kill "$p" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$RUN/pids/kwok.pid"
  log "kwok stopped"
}

status() {
  if running; then
    echo "kwok v$KWOK_VERSION running; fake nodes Ready: $(kc get nodes -l "$NODE_LABEL" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null | grep -c True || true)"
  else
    echo "kwok not running"
  fi
}

case "${1:-}" in
  build) build ;;
  up) up ;;
  nodes) nodes "${2:-}" ;;
  down) down ;;
  status) status ;;
  *) die "usage: hack/kwok.sh build | up | nodes N | down | status" ;;
esac
