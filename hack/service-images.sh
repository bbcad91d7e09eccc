#!/bin/bash
# Images of the services the chart's self-contained install runs beside the operator, built by
# the project where none can be pulled (hack/kind-up.sh; docs/local-cluster.md#kind): Postgres 15
# from Debian 12's packages with images/postgres/entrypoint (the official image's environment
# interface), and versitygw, the S3 server the local stack runs (hack/s3.sh builds it), on a
# Debian minbase for the `sh` the chart's command line needs. Daemonless, like the node image.
#   service-images.sh            build what is missing; prints each archive's path
#   service-images.sh refs       print the two references (postgres.image, objectStore.image)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$CACHE/kind/services
. "$ROOT/hack/rootfs.sh"
VERSITYGW_VERSION=${BUZZ_VERSITYGW_VERSION:-1.8.0}   # the version hack/s3.sh builds
POSTGRES_REF=docker.io/buzz/postgres:15
OBJECTSTORE_REF=docker.io/buzz/versitygw:v$VERSITYGW_VERSION
case "${1:-build}" in
refs) echo "$POSTGRES_REF $OBJECTSTORE_REF"; exit 0 ;;
build) ;;
*) die "usage: hack/service-images.sh [build|refs]" ;;
esac
need_root
mkdir -p "$W"
bash "$ROOT/hack/deps.sh"
bash "$ROOT/hack/s3.sh" build
vg_bin=$CACHE/versitygw/v$VERSITYGW_VERSION/versitygw
[ -x "$vg_bin" ] || die "versitygw v$VERSITYGW_VERSION is not at $vg_bin after hack/s3.sh build"

# the chart runs Postgres as uid/gid 70 (the official image's postgres user); Debian's package
# made its postgres user with another id, so it is renumbered, and its socket directory made
postgres_prepare() {
  sed -i -E 's/^postgres:x:[0-9]+:[0-9]+:/postgres:x:70:70:/' "$1/etc/passwd"
  sed -i -E 's/^postgres:x:[0-9]+:/postgres:x:70:/' "$1/etc/group"
  mkdir -p "$1/var/run/postgresql" "$1/var/lib/postgresql/data"
  chown -R 70:70 "$1/var/run/postgresql" "$1/var/lib/postgresql"
}
pg_root=$(rootfs_tar postgres postgresql-15)
key=$( { cat "$ROOT/images/postgres/entrypoint" "$0" "$ROOT/hack/rootfs.sh" "$ROOT/hack/mkoci.py"; echo "$pg_root"; } | sha256sum | cut -c1-16)
OCI_PREPARE=postgres_prepare oci_archive "$W/postgres.tar" "$key" "$POSTGRES_REF" /usr/local/bin/docker-entrypoint "$pg_root" \
  --env PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8 \
  -- "$ROOT/images/postgres/entrypoint=usr/local/bin/docker-entrypoint"

netbase=$(rootfs_tar objectstore ca-certificates)
key=$( { cat "$vg_bin" "$0" "$ROOT/hack/rootfs.sh" "$ROOT/hack/mkoci.py"; echo "$netbase"; } | sha256sum | cut -c1-16)
oci_archive "$W/objectstore.tar" "$key" "$OBJECTSTORE_REF" /usr/local/bin/versitygw "$netbase" -- "$vg_bin=usr/local/bin/versitygw"
echo "$W/postgres.tar"
echo "$W/objectstore.tar"
