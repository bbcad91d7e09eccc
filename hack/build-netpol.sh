#!/bin/bash
# Build the local cluster's NetworkPolicy enforcer, kube-router $KUBE_ROUTER_VERSION, from the Go
# module proxy, run later by cluster-up with only its firewall controller (no BGP routing, no
# service proxy: the bridge CNI routes, kube-proxy serves Services).
#
# Why kube-router and not kube-network-policies (the enforcer kind ships): kube-network-policies
# hands new connections to userspace with nftables' `queue` statement, and this machine's kernel
# is built without CONFIG_NFT_QUEUE. kube-router enforces with iptables and ipsets, both present.
#
# kube-router's own go.mod pins dependencies with published advisories (x/net HTTP/2 floods,
# protobuf's protojson loop); the wrapper module lifts those leaf libraries to current releases
# and the binary is built with the machine's Go, whose standard library carries its own fixes.
# docs/local-cluster.md records what it is used for (a loopback-only test cluster).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
out=$K8S/kube-router-$KUBE_ROUTER_VERSION/kube-router
[ -x "$out" ] && { log "kube-router $KUBE_ROUTER_VERSION cached"; exit 0; }
log "building kube-router $KUBE_ROUTER_VERSION from the Go module proxy (about 2 minutes)"
use_go
W=$K8S/kube-router-$KUBE_ROUTER_VERSION/build
mkdir -p "$W"; cd "$W"
rm -f go.mod go.sum
{ echo "module buzz-operator.local/netpol-build"; echo; echo "go 1.26.0"; } > go.mod
go get "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@v$KUBE_ROUTER_VERSION" > get.log 2>&1 \
  || { tail -20 get.log >&2; die "resolving kube-router v$KUBE_ROUTER_VERSION failed; log in $W/get.log"; }
# shellcheck disable=SC2086
go get $KUBE_ROUTER_LIFTS >> get.log 2>&1 || { tail -20 get.log >&2; die "lifting kube-router's dependencies failed; log in $W/get.log"; }
CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=v$KUBE_ROUTER_VERSION" \
  -o "$out.tmp" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router > build.log 2>&1 \
  || { tail -30 build.log >&2; die "kube-router build failed; full log in $W/build.log"; }
mv "$out.tmp" "$out"
log "kube-router ready: $out"
