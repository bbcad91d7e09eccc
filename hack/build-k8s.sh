#!/bin/bash
# Build Kubernetes $K8S_VERSION (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
# kube-proxy, kubectl) from the Go module proxy with the machine's Go (/usr/local/go, >= 1.26).
# Further commands of the release are named as arguments: hack/kind-node.sh asks for kubeadm.
#
# k8s.io/kubernetes is a Go module, but its go.mod requires every staging module (k8s.io/api,
# k8s.io/client-go, ...) at v0.0.0 and replaces them with ./staging/src/..., which a module zip
# does not carry. A wrapper module therefore requires k8s.io/kubernetes at the release and
# replaces each v0.0.0 staging requirement with the same release's published tag
# (v1.X.Y -> v0.X.Y), as docs/local-cluster.md describes.
#
# Binaries land in $K8S_BIN (keyed by version under ~/.cache/buzz-operator); a second run
# builds nothing. Its Go build cache is removed afterwards (3 GB); the module cache is kept.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
mkdir -p "$K8S_BIN"
missing=""
WANTED="$K8S_BINARIES $*"
for b in $WANTED; do [ -x "$K8S_BIN/$b" ] || missing="$missing $b"; done
[ -x "$K8S_BIN/pause" ] || missing="$missing pause"
[ -z "$missing" ] && { log "k8s $K8S_VERSION binaries cached in $K8S_BIN"; exit 0; }
log "building k8s $K8S_VERSION:$missing from the Go module proxy (cold: about 7 minutes on 2 cores)"
need_disk "$CACHE" 6000 "the Kubernetes build"
use_go
W=$K8S/build-$K8S_VERSION
mkdir -p "$W"
cd "$W"
export GOCACHE=$W/gocache   # its own, removed at the end (3 GB) without touching other builds
staging_tag="v0.${K8S_VERSION#*.}"
if [ ! -f go.sum ] || ! grep -q "k8s.io/kubernetes v$K8S_VERSION" go.mod 2>/dev/null; then
  rm -f go.mod go.sum
  go mod init buzz-operator.local/k8s-build >/dev/null 2>&1
  go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" > kubernetes.json || die "go mod download k8s.io/kubernetes@v$K8S_VERSION failed; is the Go module proxy reachable?"
  kmod=$(sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p' kubernetes.json)
  gover=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$kmod")
  {
    echo "module buzz-operator.local/k8s-build"
    echo
    echo "go $gover"
    echo
    sed -n 's/^godebug /godebug /p' "$kmod"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    # every staging module the release requires at v0.0.0, at the release's own tag
    awk '/^\tk8s.io\/[a-z0-9-]+ v0.0.0$/ {print "\t" $1 " => " $1 " '"$staging_tag"'"}' "$kmod"
    echo ")"
  } > go.mod
  # resolve the build list of the commands themselves (main packages cannot be imported)
  # shellcheck disable=SC2046
  go get $(for b in $WANTED; do echo "k8s.io/kubernetes/cmd/$b@v$K8S_VERSION"; done) > "$W/get.log" 2>&1 \
    || { tail -20 "$W/get.log" >&2; die "resolving k8s.io/kubernetes v$K8S_VERSION's dependencies failed; log in $W/get.log"; }
fi
pkgs=""
for b in $missing; do [ "$b" = pause ] || pkgs="$pkgs k8s.io/kubernetes/cmd/$b"; done
if [ -n "$pkgs" ]; then
  V=k8s.io/component-base/version
  LDF="-s -w -X $V.gitVersion=v$K8S_VERSION -X $V.gitMajor=${K8S_VERSION%%.*} -X $V.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)"
  LDF="$LDF -X $V.gitTreeState=clean -X $V.buildDate=1970-01-01T00:00:00Z"
  LDF="$LDF -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"
  # shellcheck disable=SC2086
  CGO_ENABLED=0 go build -mod=mod -trimpath -tags providerless,dockerless -ldflags "$LDF" -o "$K8S_BIN/" $pkgs > "$W/build.log" 2>&1 \
    || { tail -30 "$W/build.log" >&2; die "k8s build failed; full log in $W/build.log"; }
fi
if [ ! -x "$K8S_BIN/pause" ]; then
  kdir=$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)
  cc -Os -static -o "$K8S_BIN/pause" "$kdir/build/pause/linux/pause.c"
fi
"$K8S_BIN/kube-apiserver" --version | grep -q "v$K8S_VERSION" || die "built kube-apiserver does not report v$K8S_VERSION"
rm -rf "$GOCACHE" "$W/build.log"
log "k8s $K8S_VERSION binaries ready in $K8S_BIN"
