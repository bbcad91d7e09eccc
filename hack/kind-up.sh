#!/bin/bash
# make kind-up (docs/local-cluster.md#kind): a kind cluster with NetworkPolicy enforced, the
# project's images loaded, the chart installed with its self-contained values (the dev relay,
# Postgres and an S3 server in the cluster), and the sample oracle sweep run to the end with its
# results table: the outcome of `make demo`, on kind.
#
# Works with Docker (when its daemon answers) or podman (Debian's, installed by `deps.sh kind`,
# set up by kind_engine_env in hack/lib.sh). kind is taken from PATH when >= 0.24, else built
# (hack/kind.sh). The node image is the project's own (hack/kind-node.sh), or any node image
# BUZZ_KIND_NODE_IMAGE names that the engine can pull (kindest/node:v1.37.x with Docker).
# Postgres and the S3 server (versitygw) are images the project builds (hack/service-images.sh).
# Idempotent: an existing cluster, release or sweep is reused. `make kind-down` removes it all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CLUSTER=${BUZZ_KIND_CLUSTER:-buzz}
NS=${BUZZ_KIND_NAMESPACE:-buzz}
RELEASE=${BUZZ_KIND_RELEASE:-buzz}
FULL=$RELEASE-buzz-operator
need_root   # the images are built as root (debootstrap, buildah); rootful podman
bash "$ROOT/hack/deps.sh" kind
KIND=$(bash "$ROOT/hack/kind.sh")
engine=$(kind_engine)
kind_engine_env "$engine"
[ "$engine" = podman ] && { shared_netns_dir || die "cannot make /run/netns a shared mount point (podman mounts its networks' namespaces there)"; }
export PATH="$BIN:$(bash "$ROOT/hack/helm.sh"):$PATH"   # the kubectl of the release built, ahead of helm.sh's 1.31
KDIR=$RUN/kind
mkdir -p "$KDIR"
# kind mounts the host's /lib/modules into each node; podman, unlike Docker, refuses a missing
# source, and a VM whose kernel has no modules (this machine's) has no /lib/modules at all
[ -d /lib/modules ] || { log "creating an empty /lib/modules (kind mounts it into the node; this kernel has no modules)"; mkdir -p /lib/modules; }
# the cluster's own kubeconfig, never the user's ~/.kube/config nor the local cluster's
export KUBECONFIG=$KDIR/kubeconfig

# the node image, and what the project's own needs of the cluster configuration
cp "$ROOT/hack/kind/cluster.yaml" "$KDIR/cluster.yaml"
if [ -n "${BUZZ_KIND_NODE_IMAGE:-}" ] && [ "$BUZZ_KIND_NODE_IMAGE" != "docker.io/buzz/kind-node:v$K8S_VERSION" ]; then
  NODE_IMAGE=$BUZZ_KIND_NODE_IMAGE
else
  NODE_IMAGE=$(bash "$ROOT/hack/kind-node.sh")
  # a cgroup v1 host needs the kubelet's leave (Kubernetes >= 1.35 refuses v1 unless
  # failCgroupV1 is false); kindest/node images are made for cgroup v2 hosts
  cat >> "$KDIR/cluster.yaml" <<YAML
kubeadmConfigPatches:
  - |
    kind: KubeletConfiguration
    failCgroupV1: false
YAML
fi
if ! "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  log "kind create cluster $CLUSTER ($engine, $NODE_IMAGE)"
  "$KIND" create cluster --name "$CLUSTER" --image "$NODE_IMAGE" --config "$KDIR/cluster.yaml" \
    --kubeconfig "$KUBECONFIG" --wait 300s --retain \
    || die "kind create cluster failed; the node is kept for a look (\"$engine exec $CLUSTER-control-plane journalctl -u kubelet\", crictl-free: \"ctr -n k8s.io t ls\"); make kind-down removes it"
else
  "$KIND" export kubeconfig --name "$CLUSTER" --kubeconfig "$KUBECONFIG" >/dev/null
fi
kubectl wait --for=condition=Ready nodes --all --timeout=300s >/dev/null
kubectl -n kube-system rollout status daemonset --timeout=300s >/dev/null 2>&1 || true
kubectl -n kube-system rollout status deployment/coredns --timeout=300s >/dev/null

# the images: the same daemonless builds as the local stack, loaded from their OCI archives
bash "$ROOT/hack/images.sh" build base operator dev-relay stack tasks
read -r PG_IMAGE STORE_IMAGE < <(bash "$ROOT/hack/service-images.sh" refs)
service_archives=$(bash "$ROOT/hack/service-images.sh")
have=$("$engine" exec "$CLUSTER-control-plane" ctr -n k8s.io images ls -q 2>/dev/null || true)
for archive in "$IMAGES"/archives/docker.io_buzz_operator_*.tar "$IMAGES"/archives/docker.io_buzz_dev-relay_*.tar \
               "$IMAGES"/archives/docker.io_buzz_stack_dev-*.tar "$IMAGES"/archives/docker.io_buzz-tasks_*.tar $service_archives; do
  name=$(tar -xOf "$archive" index.json | python3 -c 'import json,sys; m=json.load(sys.stdin)["manifests"][0]["annotations"]; print(m.get("io.containerd.image.name") or m["org.opencontainers.image.ref.name"])')
  stamp=$KDIR/.loaded-$CLUSTER-$(basename "$archive")
  if grep -qxF "$name" <<<"$have" && [ -f "$stamp" ] && [ "$stamp" -nt "$archive" ]; then continue; fi
  log "kind load $(basename "$archive")"
  "$KIND" load image-archive "$archive" --name "$CLUSTER" >/dev/null
  touch "$stamp"
done

kubectl get namespace "$NS" >/dev/null 2>&1 || kubectl create namespace "$NS"
helm upgrade --install "$RELEASE" "$ROOT/charts/buzz-operator" -n "$NS" \
  -f "$ROOT/charts/buzz-operator/ci/self-contained-values.yaml" --set metrics.serviceMonitor.enabled=false \
  --set image.pullPolicy=Never --set postgres.image="$PG_IMAGE" \
  --set objectStore.server=versitygw --set objectStore.image="$STORE_IMAGE" --wait --timeout 300s
# Helm installs crds/ only once: keep them current on a re-run
kubectl apply --server-side --force-conflicts -f "$ROOT/charts/buzz-operator/crds/" >/dev/null

"$ROOT/.venv/bin/python" - "$NS" "$FULL" <<'PY' | kubectl -n "$NS" apply -f -
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
kubectl -n "$NS" wait --for=condition=Complete buzzsweep/demo-oracle --timeout=1800s \
  || { kubectl -n "$NS" get buzzsweeps,buzztrials >&2; die "demo-oracle did not complete; 'kubectl -n $NS describe buzzsweep demo-oracle' says why"; }
kubectl -n "$NS" get buzzsweeps,buzztrials

# the results table from the bundles in the cluster's object store, reached by a port-forward
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
kubectl -n "$NS" port-forward "svc/$FULL-objectstore" "$port:9000" >"$KDIR/port-forward.log" 2>&1 &
pf=$!
trap 'kill $pf 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
secret() { kubectl -n "$NS" get secret "$FULL-objectstore" -o "jsonpath={.data.$1}" | base64 -d; }
AWS_ACCESS_KEY_ID=$(secret AWS_ACCESS_KEY_ID) AWS_SECRET_ACCESS_KEY=$(secret AWS_SECRET_ACCESS_KEY) \
  AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_DEFAULT_REGION=us-east-1 \
  "$ROOT/.venv/bin/buzzctl" sweep results demo-oracle --store s3://buzz-bundles --failures
log "done: KUBECONFIG=$KUBECONFIG kubectl get buzzsweeps -n $NS; 'make kind-down' removes it all"
