#!/bin/bash
# Build the Kubernetes v1.20.2 server binaries (and kubectl, kube-proxy) from Debian 12's own
# source package, offline after apt. See shared/reference/k8s-test-infra.md §1c and Appendix A.
# Skips the build when every binary is already in the cache.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
mkdir -p "$BIN"
missing=""
for b in $K8S_BINARIES pause; do [ -x "$BIN/$b" ] || missing="$missing $b"; done
[ -z "$missing" ] && { log "k8s binaries cached in $BIN"; exit 0; }
log "building k8s $K8S_VERSION:$missing (cold build takes about 11 minutes on 2 cores)"
need_disk "$K8S" 4000 "the Kubernetes build"
command -v go >/dev/null && [ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] && command -v rsync >/dev/null \
  || die "the build needs golang-go, golang-github-modern-go-reflect2-dev and rsync; run hack/deps.sh"
cd "$K8S"
mkdir -p apt/parts apt/lists/partial
# deb-src for the machine's own Debian sources, in a private apt config (system config untouched)
sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > apt/parts/debian-src.sources
O="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$K8S/apt/parts -o Dir::State::Lists=$K8S/apt/lists -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache="
if [ ! -d src/cmd/kube-apiserver ]; then
  apt-get $O update -q >/dev/null
  rm -rf src
  apt-get $O source -q --download-only "kubernetes=$K8S_DEB_VERSION" >/dev/null 2>&1 \
    || die "apt-get source kubernetes=$K8S_DEB_VERSION failed; is the Debian archive reachable?"
  dpkg-source -x "kubernetes_$K8S_DEB_VERSION.dsc" src >/dev/null 2>&1
  rm -f kubernetes_*.tar.* kubernetes_*.dsc
fi
cd src
# vendored reflect2 v1.0.1 segfaults under Go >= 1.18 (json-iterator map encoding); use Debian's 1.0.2
rm -rf vendor/github.com/modern-go/reflect2 && mkdir vendor/github.com/modern-go/reflect2
cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go vendor/github.com/modern-go/reflect2/
rm -f vendor/github.com/modern-go/reflect2/*_test.go
export GOPATH=$PWD/.go CGO_ENABLED=0 GOPROXY=off GOFLAGS= HOME=$K8S/home GOCACHE=$K8S/gocache
mkdir -p .go/src/k8s.io "$HOME"; ln -sfn ../../.. .go/src/k8s.io/kubernetes
WHAT=""
for b in $missing; do [ "$b" = pause ] || WHAT="$WHAT cmd/$b"; done
if [ -n "$WHAT" ]; then
  make WHAT="${WHAT# }" > "$K8S/build.log" 2>&1 || { tail -30 "$K8S/build.log" >&2; die "k8s build failed; full log in $K8S/build.log"; }
  for b in $WHAT; do cp "_output/bin/$(basename "$b")" "$BIN/"; done
fi
cc -Os -static -o "$BIN/pause" build/pause/linux/pause.c
# the Go build cache is 2 GB and only speeds up a rebuild that the cache check above avoids
rm -rf "$K8S/gocache" _output
log "k8s binaries ready in $BIN"
