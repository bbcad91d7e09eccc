#!/bin/bash
# Fetch and unpack (dpkg -x, never installed) the Debian packages the local cluster takes from
# a named suite other than the machine's: etcd >= 3.5.11 (kube-apiserver >= 1.31 needs it;
# bookworm has 3.4.23) and containerd 1.7 (bookworm has 1.6.20; the cluster runs it when
# BUZZ_CONTAINERD_VERSION=1.7, a built 2.x otherwise: hack/lib.sh). They come from Debian 13
# "trixie" through a private apt configuration under $CACHE, so /etc/apt is untouched and the
# result is the same on a Debian 12 or 13 machine. Each package lands in
# $CACHE/debian/<suite>/<package>_<version>/, and $CACHE/debian/<suite>/current/<package>
# points at the one in use; a second run downloads nothing.
#
# runc is not taken from trixie: its build needs glibc 2.38, which bookworm lacks; Debian 12's
# runc (1.1.5, hack/deps.sh) works with containerd 1.7.
#   debian-pkgs.sh            fetch what is missing
#   debian-pkgs.sh path PKG   print the unpacked root of PKG
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SUITE=$DEBIAN_EXTRA_SUITE
D=$CACHE/debian/$SUITE
if [ "${1:-}" = path ]; then
  [ -d "$D/current/$2" ] || die "$2 from Debian $SUITE is not unpacked; run hack/debian-pkgs.sh"
  readlink -f "$D/current/$2"; exit 0
fi
need_root
missing=""
for p in $DEBIAN_EXTRA_PKGS; do [ -d "$D/current/$p" ] || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
log "fetching from Debian $SUITE:$missing"
mkdir -p "$D/apt/parts" "$D/apt/lists/partial" "$D/current" "$D/debs"
src=/etc/apt/sources.list.d/debian.sources
[ -f "$src" ] || die "$src not found: the private apt configuration for Debian $SUITE is derived from this machine's Debian sources (deb822)"
# the machine's own archives, with every suite line naming $SUITE instead
sed -E "s/^Suites:.*-security$/Suites: $SUITE-security/; /-security$/! s/^Suites:.*/Suites: $SUITE $SUITE-updates/" "$src" \
  > "$D/apt/parts/$SUITE.sources"
O=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$D/apt/parts" -o "Dir::State::Lists=$D/apt/lists"
   -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Dir::State::status=/dev/null -o APT::Sandbox::User=root)
apt-get "${O[@]}" update -q >/dev/null || die "apt-get update for Debian $SUITE failed; is the Debian archive reachable?"
cd "$D/debs"
# shellcheck disable=SC2086
apt-get "${O[@]}" download -q $missing >/dev/null || die "apt-get download of$missing from Debian $SUITE failed"
for p in $missing; do
  deb=$(ls -t "${p}"_*.deb | head -1)
  ver=$(dpkg-deb -f "$deb" Version)
  dir=$D/${p}_$ver
  rm -rf "$dir.tmp" && dpkg-deb -x "$deb" "$dir.tmp" && rm -rf "$dir" && mv "$dir.tmp" "$dir"
  ln -sfn "$dir" "$D/current/$p"
  rm -f "$deb"
  log "unpacked $p $ver from Debian $SUITE"
done
