# Sourced by the scripts that build images from Debian root filesystems without buildah
# (hack/kind-node.sh, hack/service-images.sh). Needs hack/lib.sh sourced first, and $W: the
# directory the root filesystem tars are kept in.

# rootfs_tar NAME PACKAGES: a debootstrapped Debian 12 minbase with PACKAGES, kept as a tar in $W
# keyed by its package list (a second call is a lookup); prints the tar's path
rootfs_tar() {
  local name=$1 pkgs=$2
  local out; out=$W/$name-$(printf %s "$pkgs" | sha256sum | cut -c1-8).tar
  if [ ! -f "$out" ]; then
    need_disk "$W" 2000 "the $name root filesystem"
    log "debootstrap $name ($pkgs)"
    local mirror; mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    local r=$W/rootfs-$name; rm -rf "$r"
    debootstrap --variant=minbase --include="$pkgs" bookworm "$r" "$mirror" > "$W/debootstrap-$name.log" 2>&1 \
      || die "debootstrap of $name failed; see $W/debootstrap-$name.log"
    # documentation and apt's caches are no use in an image nobody logs into
    rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/usr/share/doc "$r"/usr/share/man "$r"/usr/share/locale
    rm -f "$out.tmp"; tar --numeric-owner -C "$r" -cf "$out.tmp" . && mv "$out.tmp" "$out" && rm -rf "$r"
  fi
  echo "$out"
}

# oci_archive OUT KEY REF ENTRYPOINT BASE_TAR [MKOCI_OPTION...] -- FILE=DEST...: a one-layer OCI
# archive of BASE_TAR (none when empty) with each FILE installed at DEST, unless OUT was already
# made for KEY
oci_archive() {
  local out=$1 key=$2 ref=$3 entry=$4 base=$5; shift 5
  local opts=(); while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done; shift || true
  [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ] && return 0
  local r; r=$(mktemp -d -p "$W")   # a fresh directory under the work dir, mktemp's own name
  [ -n "$base" ] && tar -C "$r" -xf "$base"
  local pair; for pair in "$@"; do install -D -m 0755 "${pair%%=*}" "$r/${pair#*=}"; done
  [ -z "${OCI_PREPARE:-}" ] || "$OCI_PREPARE" "$r"
  python3 "$(dirname "${BASH_SOURCE[0]}")/mkoci.py" "${opts[@]}" "$r" "$out.tmp" "$ref" "$entry" \
    && mv "$out.tmp" "$out" && echo "$key" > "$out.key"
  rm -rf "$r"
}
