#!/bin/bash
# containerd $BUZZ_CONTAINERD_VERSION (2.x) built from the Go module proxy, for a local cluster
# that runs it instead of Debian 13's 1.7 (docs/local-cluster.md#containerd-2): `containerd`,
# `containerd-shim-runc-v2` and `ctr` under $CACHE/containerd-<version>/bin. Why one would: the
# kubelet's image volumes (docs/stack.md#mounting-the-image-instead-of-copying-it-left) need
# containerd >= 2.1. A second run builds nothing.
#   build-containerd.sh          build what is missing
#   build-containerd.sh path     print the bin directory
set -euo pipefail
. "$(dirname "$0")/lib.sh"
V=${CONTAINERD_VERSION:?BUZZ_CONTAINERD_VERSION is not set: name a containerd 2.x release, e.g. 2.2.9}
case "$V" in 2.*) ;; *) die "BUZZ_CONTAINERD_VERSION=$V: only 2.x is built here (1.7 comes from Debian 13; leave it unset)" ;; esac
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
