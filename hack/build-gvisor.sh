#!/bin/bash
# gVisor for the local cluster (docs/isolation.md#gvisor): `runsc` and its containerd shim
# (`containerd-shim-runsc-v1`), built from the Go module proxy at $GVISOR_VERSION (hack/lib.sh; a
# pseudo-version of gVisor's go branch, the only form the proxy serves) with CGO_ENABLED=0, under
# $CACHE/gvisor-<version>/bin. A second run builds nothing.
#
# One line is changed, in a copy of the module (the module cache stays as the proxy served it):
# gVisor's shim gives itself oom_score_adj -999 and fails the pod's sandbox when the kernel
# refuses, and lowering an oom_score_adj needs CAP_SYS_RESOURCE, which this machine's VM drops
# from every process's bounding set. containerd's own shims tolerate exactly that refusal
# (containerd pkg/sys SetOOMScore); the change makes gVisor's shim tolerate it the same way, and
# only it: any other error still fails the start. The local containerd already clamps containers'
# scores to its own for the same reason (restrict_oom_score_adj, hack/cluster-up.sh).
#   build-gvisor.sh          build what is missing
#   build-gvisor.sh path     print the bin directory
set -euo pipefail
. "$(dirname "$0")/lib.sh"
V=$GVISOR_VERSION
HOME_DIR=$CACHE/gvisor-$V
DIR=$HOME_DIR/bin
if [ "${1:-}" = path ]; then echo "$DIR"; exit 0; fi
if [ -x "$DIR/runsc" ] && [ -x "$DIR/containerd-shim-runsc-v1" ] && [ -f "$DIR/.built" ]; then exit 0; fi
use_go
need_disk "$CACHE" 3000 "building gVisor $V"
log "building gVisor $V (runsc and containerd-shim-runsc-v1) from the Go module proxy (several minutes)"
m=gvisor.dev/gvisor
SRC=$(go mod download -json "$m@$V" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir") or d.get("Error") or "")')
[ -d "$SRC" ] || die "the Go module proxy did not serve $m@$V: $SRC"
# A copy of the module to build in (the module cache stays as the proxy served it), with the
# shim's one refused write tolerated as containerd tolerates it.
WORK=$CACHE/gvisor-build.$$; rm -rf "$WORK"; mkdir -p "$WORK"; trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC" "$WORK/gvisor" && chmod -R u+w "$WORK/gvisor"
MANAGER=$WORK/gvisor/pkg/shim/v1/manager.go
sed -i -e 's|if err := sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil {|if err := sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil \&\& !os.IsPermission(err) {|' "$MANAGER"
grep -q 'oomScoreMax); err != nil && !os.IsPermission(err) {' "$MANAGER" \
  || die "gVisor $V's shim no longer sets its OOM score where hack/build-gvisor.sh expects; read pkg/shim/v1/manager.go and update the edit"
grep -q '^	"os"$' "$MANAGER" || die "gVisor $V's shim manager does not import os; update hack/build-gvisor.sh's edit"
mkdir -p "$DIR"
(cd "$WORK/gvisor" && CGO_ENABLED=0 go build -o "$DIR/runsc" ./runsc \
  && CGO_ENABLED=0 go build -o "$DIR/containerd-shim-runsc-v1" ./shim) || die "building gVisor $V failed"
"$DIR/runsc" --version >/dev/null || die "the runsc built under $DIR does not run"
echo "$V" > "$DIR/.built"
log "gVisor $V built: $DIR"
