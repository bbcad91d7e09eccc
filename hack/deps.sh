#!/bin/bash
# Install the Debian packages the local stack needs. Idempotent: apt is called only for what is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
# The machine's own suite. etcd (and containerd 1.7, when chosen) come from Debian 13
# (hack/debian-pkgs.sh), and Kubernetes, containerd 2.x and kube-router are built with the
# machine's Go (hack/build-k8s.sh, build-containerd.sh, build-netpol.sh).
# redis-server: Block's relay needs Redis when tests/realstack runs it (docs/real-stack.md).
PKGS="runc containernetworking-plugins iptables ipset conntrack curl dpkg-dev debootstrap buildah skopeo
postgresql iproute2 openssl jq bc tmux chromium redis-server"
# `deps.sh kind`: podman too, the engine kind drives where no Docker daemon answers (hack/kind-up.sh)
[ "${1:-}" = kind ] && PKGS="$PKGS podman"
missing=""
for p in $PKGS; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
log "installing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null || die "apt-get update failed; is the Debian archive reachable?"
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing >/dev/null \
  || die "apt-get install of$missing failed; run 'apt-get install$missing' to see why"
