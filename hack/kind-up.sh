#!/bin/bash
# make kind-up: a kind cluster with NetworkPolicy enforcement, the images built and loaded, the
# chart installed with the self-contained values (dev relay + Postgres + MinIO), and the sample
# oracle sweep run to the end. For users with Docker; the local stack's CI runs the same chart
# flow through tests/integration/chart instead (no Docker there).
#
# Needs: docker, kind >= 0.24 (kindnet enforces NetworkPolicy), and pulls of postgres/minio.
# Idempotent: an existing cluster, release or sweep is reused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CLUSTER=${BUZZ_KIND_CLUSTER:-buzz}
NS=${BUZZ_KIND_NAMESPACE:-buzz}
RELEASE=${BUZZ_KIND_RELEASE:-buzz}
KIND_MIN=0.24.0

command -v docker >/dev/null || die "kind-up needs Docker (docker not found); on the local stack use 'make test-integration' (tests/integration/chart)"
command -v kind >/dev/null || die "kind not found; install kind >= $KIND_MIN (https://kind.sigs.k8s.io/docs/user/quick-start/)"
have=$(kind version | sed -n 's/^kind v\([0-9.]*\).*/\1/p')
[ "$(printf '%s\n%s\n' "$KIND_MIN" "$have" | sort -V | head -1)" = "$KIND_MIN" ] \
  || die "kind $have does not enforce NetworkPolicy; kind >= $KIND_MIN does"
BINDIR=$(bash "$ROOT/hack/helm.sh")
export PATH="$BINDIR:$PATH"
unset KUBECONFIG   # kind writes its context into ~/.kube/config

# the node image in step with the local cluster's version (hack/lib.sh); a kind release that
# publishes no image of exactly that patch takes BUZZ_KIND_NODE_IMAGE=kindest/node:v1.37.x
NODE_IMAGE=${BUZZ_KIND_NODE_IMAGE:-kindest/node:v$K8S_VERSION}
kind get clusters | grep -qx "$CLUSTER" || kind create cluster --name "$CLUSTER" --image "$NODE_IMAGE" \
  --config "$ROOT/hack/kind/cluster.yaml" --wait 120s
kubectl config use-context "kind-$CLUSTER" >/dev/null

# the images: the same daemonless (buildah, as root) builds as the local stack, loaded from their OCI archives
bash "$ROOT/hack/images.sh" build pause base operator dev-relay stack tasks
for archive in "$IMAGES"/archives/*.tar; do
  log "kind load $(basename "$archive")"
  kind load image-archive "$archive" --name "$CLUSTER"
done

kubectl get namespace "$NS" >/dev/null 2>&1 || kubectl create namespace "$NS"
helm upgrade --install "$RELEASE" "$ROOT/charts/buzz-operator" -n "$NS" \
  -f "$ROOT/charts/buzz-operator/ci/self-contained-values.yaml" --set metrics.serviceMonitor.enabled=false \
  --set image.pullPolicy=Never --wait --timeout 300s
# Helm installs crds/ only once: keep them current on a re-run
kubectl apply --server-side --force-conflicts -f "$ROOT/charts/buzz-operator/crds/"

"$ROOT/.venv/bin/python" - "$NS" "$RELEASE-buzz-operator" <<'PY' | kubectl -n "$NS" apply -f -
import json, sys, yaml
from pathlib import Path
from buzz_operator.dev.demo import condition_config_map
ns, full = sys.argv[1], sys.argv[2]
root = Path("manifests")
items = [condition_config_map("standin-oracle", "standin-oracle.yaml"),
         {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "standin-endpoints"},
          "data": {"standin.json": (root / "endpoints/standin.json").read_text()}},
         {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "standin-api-keys"},
          "stringData": {"STANDIN_API_KEY": "standin-kind"}}]
sweep = next(d for d in yaml.safe_load_all((root / "sweeps/demo.yaml").read_text()) if d["metadata"]["name"] == "demo-oracle")
for ref in ("serviceRef", "ownerKeySecretRef", "postgresDsnSecretRef"):
    sweep["spec"]["relay"][ref]["name"] = f"{full}-dev-relay"
sweep["spec"]["storage"] = {"url": "s3://buzz-bundles", "endpoint": f"http://{full}-objectstore.{ns}.svc:9000",
                            "credentialsSecretRef": {"name": f"{full}-objectstore"}}
sweep["spec"]["imagePullPolicy"] = "Never"
items.append(sweep)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
log "sweep demo-oracle submitted; waiting for it to complete"
kubectl -n "$NS" wait --for=condition=Complete buzzsweep/demo-oracle --timeout=1200s
kubectl -n "$NS" get buzzsweeps,buzztrials
log "done: 'kind delete cluster --name $CLUSTER' removes it all"
