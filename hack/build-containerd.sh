#!/bin/bash
# The local cluster's containerd, $BUZZ_CONTAINERD_VERSION (2.x, default 2.2.9: hack/lib.sh), built
# from the Go module proxy (docs/local-cluster.md#containerd-2): `containerd`,
# `containerd-shim-runc-v2` and `ctr` under $CACHE/containerd-<version>/bin. Why not Debian's 1.7:
# the kubelet's image volumes (docs/stack.md#mount) need containerd >= 2.1. A second run builds
# nothing.
#   build-containerd.sh          build what is missing
#   build-containerd.sh path     print the bin directory
set -euo pipefail
. "$(dirname "$0")/lib.sh"
V=${CONTAINERD_VERSION:?BUZZ_CONTAINERD_VERSION=1.7 runs the containerd of Debian 13, which is not built here}
case "$V" in 2.*) ;; *) die "BUZZ_CONTAINERD_VERSION=$V: only 2.x is built here (1.7 comes from Debian 13: BUZZ_CONTAINERD_VERSION=1.7)" ;; esac
DIR=$CTRD_BUILT_BIN
if [ "${1:-}" = path ]; then echo "$DIR"; exit 0; fi
if [ -x "$DIR/containerd" ] && [ -x "$DIR/containerd-shim-runc-v2" ] && [ -x "$DIR/ctr" ] \
   && "$DIR/containerd" --version | grep -q " $V"; then exit 0; fi
use_go
need_disk "$CACHE" 2000 "building containerd $V"
log "building containerd $V from the Go module proxy (a few minutes)"
mkdir -p "$DIR"
m=github.com/containerd/containerd/v2/cmd
GOBIN=$DIR CGO_ENABLED=1 go install "$m/containerd@v$V" "$m/containerd-shim-runc-v2@v$V" "$m/ctr@v$V" \
  || die "building containerd $V failed (is v$V a release in the Go module proxy?)"
"$DIR/containerd" --version | grep -q " $V" || die "the containerd built under $DIR does not say it is $V"
log "containerd $V built: $DIR"
