#!/bin/bash
# Kueue $KUEUE_VERSION on the local cluster, built here from its Go module (no registry image):
#   hack/kueue.sh up       build the manager (cached by version), its image, install and wait ready
#   hack/kueue.sh down     remove everything `up` installed (webhooks first, so nothing is gated)
#   hack/kueue.sh status   installed and ready, or not
# Idempotent: `up` on a running Kueue re-applies the same manifests and returns when ready; one
# `up` runs at a time (a lock in the cache).
#
# The manifests are Kueue's own config/default (kubectl kustomize of the module), narrowed by
# hack/kueue_manifests.py so that only namespaces labelled buzz-operator.dev/kueue=enabled are
# touched by its Pod webhook (docs/queueing.md#the-local-kueue says why each change).
# Cold: about 12 minutes on 2 cores (module download and build); cached afterwards under
# $CACHE/kueue/v$KUEUE_VERSION.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KUEUE_VERSION=${BUZZ_KUEUE_VERSION:-0.17.0}
KQ=$CACHE/kueue
KQ_BIN=$KQ/v$KUEUE_VERSION/kueue-manager
KQ_IMAGE=docker.io/buzz-test/kueue:v$KUEUE_VERSION
KQ_NS=kueue-system

build() {
  [ -x "$KQ_BIN" ] && return 0
  log "building Kueue v$KUEUE_VERSION's manager from the Go module proxy (cold: about 12 minutes on 2 cores)"
  go_tool_build kueue sigs.k8s.io/kueue "$KUEUE_VERSION" sigs.k8s.io/kueue/cmd/kueue "$KQ_BIN" "$KQ" 3000
  log "Kueue v$KUEUE_VERSION manager built: $KQ_BIN"
}

module_dir() { (use_go; cd "$KQ/src" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue); }

image() {
  local out; out=$IMAGES/archives/$(echo "$KQ_IMAGE" | tr '/:' '__')-$(sha256sum "$KQ_BIN" | cut -c1-16).tar
  if [ ! -f "$out" ]; then
    local r; r=$(mktemp -d)
    # one static binary; /tmp is where it writes the webhook certificates it makes itself
    install -m 0755 "$KQ_BIN" "$r/manager"; install -d -m 1777 "$r/tmp"
    rm -f "$IMAGES/archives/$(echo "$KQ_IMAGE" | tr '/:' '__')"-*.tar
    mkdir -p "$IMAGES/archives"
    python3 "$ROOT/hack/mkoci.py" "$r" "$out.tmp" "$KQ_IMAGE" /manager && mv "$out.tmp" "$out"
    rm -rf "$r"
  fi
  if ! ctr -a "$CTRD_SOCK" -n k8s.io images ls -q | grep -qxF "$KQ_IMAGE" || [ "$out" -nt "$KQ/.imported" ]; then
    ctr -a "$CTRD_SOCK" -n k8s.io images import --all-platforms "$out" >/dev/null || die "importing $out into containerd failed"
    touch "$KQ/.imported"
  fi
}

manifests() {  # the narrowed install, written once per version and script content
  local key; key=$(cat "$ROOT/hack/kueue_manifests.py" "$0" | sha256sum | cut -c1-12)
  local out=$KQ/v$KUEUE_VERSION/install-$key.yaml
  if [ ! -f "$out" ]; then
    local dir; dir=$(module_dir)
    kc kustomize "$dir/config/default" > "$out.rendered" || die "kubectl kustomize $dir/config/default failed"
    # PyYAML: the project's .venv (make install) has it; a bare python3 may not
    local py=$ROOT/.venv/bin/python; [ -x "$py" ] || py=python3
    "$py" "$ROOT/hack/kueue_manifests.py" "$out.rendered" "$KQ_IMAGE" > "$out.tmp" && mv "$out.tmp" "$out"
    rm -f "$out.rendered"
    # renders of an older script are of no further use (down reads the newest)
    find "$(dirname "$out")" -maxdepth 1 -name 'install-*.yaml' ! -name "$(basename "$out")" -delete
  fi
  echo "$out"
}

ready() {
  kc -n "$KQ_NS" get deploy kueue-controller-manager -o jsonpath='{.status.readyReplicas}' 2>/dev/null | grep -qx 1 || return 1
  # the webhook answers (its certificate is in place): a server-side dry run of a ResourceFlavor
  # goes through Kueue's mutating and validating webhooks
  printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: buzz-probe}\n' \
    | kc apply --dry-run=server -f - >/dev/null 2>&1
}

up() {
  need_root
  kc get --raw /readyz >/dev/null 2>&1 || die "the local cluster is not running: 'make cluster-up' first"
  # one `up` at a time: test sessions share the cluster and the cache (a build, an import, a render)
  mkdir -p "$KQ"
  exec 9>>"$KQ/up.lock"
  flock 9
  build
  image
  local m; m=$(manifests)
  kc apply --server-side --force-conflicts -f "$m" >/dev/null || die "applying $m failed"
  kc -n "$KQ_NS" rollout status deploy/kueue-controller-manager --timeout=180s >/dev/null \
    || { kc -n "$KQ_NS" logs deploy/kueue-controller-manager --tail=30 >&2 || true; die "Kueue's manager did not become ready in 180 s"; }
  # the manager writes its certificate into a Secret the kubelet then syncs into the pod: the
  # webhooks answer only once it has (up to a minute; on a first install right after the cold
  # build, on a busy 2-core machine, more than 120 s was seen in CI)
  local i
  for i in $(seq 1 300); do ready && { log "Kueue v$KUEUE_VERSION ready (namespaces labelled buzz-operator.dev/kueue=enabled)"; return 0; }; sleep 1; done
  kc -n "$KQ_NS" logs deploy/kueue-controller-manager --tail=30 >&2 || true
  die "Kueue's webhooks did not answer within 300 s of its manager being ready"
}

down() {
  kc get --raw /readyz >/dev/null 2>&1 || { log "cluster not running; nothing to remove"; return 0; }
  local m; m=$(ls -t "$KQ/v$KUEUE_VERSION"/install-*.yaml 2>/dev/null | head -1 || true)
  # webhooks first: with the manager gone they would refuse every create they match
  kc delete mutatingwebhookconfiguration kueue-mutating-webhook-configuration --ignore-not-found >/dev/null
  kc delete validatingwebhookconfiguration kueue-validating-webhook-configuration --ignore-not-found >/dev/null
  kc -n "$KQ_NS" delete deploy kueue-controller-manager --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  # with the manager gone nobody removes Kueue's finalizers: take off its own (and only its own)
  # from what still carries one, or those namespaces and Kueue's CRDs would never finish deleting
  local kind
  for kind in pods workloads; do
    kc get "$kind" -A -o json 2>/dev/null | python3 -c '
import json, sys
for item in json.load(sys.stdin)["items"]:
    meta = item["metadata"]
    mine = [f for f in meta.get("finalizers") or [] if f.startswith("kueue.x-k8s.io/")]
    if mine:
        kept = [f for f in meta["finalizers"] if f not in mine]
        print(meta["namespace"], meta["name"], json.dumps({"metadata": {"finalizers": kept or None}}))
' | while read -r ns name patch; do
      kc -n "$ns" patch "$kind" "$name" --type=merge -p "$patch" >/dev/null 2>&1 || true
    done || true
  done
  [ -n "$m" ] && kc delete -f "$m" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  log "Kueue removed"
}

status() {
  if ready; then echo "kueue v$KUEUE_VERSION ready"; else echo "kueue not ready"; fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  build) build ;;
  *) die "usage: hack/kueue.sh up | down | status | build" ;;
esac
