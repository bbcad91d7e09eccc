#!/bin/bash
# Images without a daemon (shared/reference/image-build.md): debootstrap for the Python base,
# buildah (chroot isolation, --pull=never) for every Dockerfile, OCI archives cached under
# $IMAGES keyed by the content digest of their build context, imported into the local
# containerd. With a Docker engine, `make images` uses docker build on the same Dockerfiles.
#   hack/images.sh build [NAME...]   build what is missing (names: base pause operator stack dev-relay tasks)
#   hack/images.sh import            import every cached archive into the running containerd
#   hack/images.sh list              the image references the project uses
#   hack/images.sh stack-image DIR   a folder-layout stack image from DIR's Linux binaries (docs/stack.md),
#                                    imported; prints its reference (BUZZ_STACK_IMAGE_NAME, BUZZ_CA_BUNDLE)
#   hack/images.sh context NAME DIR  DIR/Dockerfile (FROM ${BASE_IMAGE}) built as NAME and imported (test images)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE_IMAGE=docker.io/buzz/debian-py:bookworm
OPERATOR_IMAGE=docker.io/buzz/operator:dev
STACK_IMAGE=docker.io/buzz/stack:dev
RELAY_IMAGE=docker.io/buzz/dev-relay:dev
TASK_REGISTRY=docker.io/buzz-tasks
# curl is in the base because the seed's verifier-deps step (docs/corridor.md#collect) installs it
# when missing, and pods here reach no Debian mirror: without it every trial waits ~45 s on apt.
BASE_PACKAGES=python3-minimal,libpython3.11-stdlib,ca-certificates,procps,curl
BASE_KEY=$(printf %s "$BASE_PACKAGES" | sha256sum | cut -c1-8)
mkdir -p "$IMAGES/archives"
# One build at a time: concurrent builds share the containers-storage graph and the archives.
if [ -z "${BUZZ_IMAGES_LOCKED:-}" ]; then
  export BUZZ_IMAGES_LOCKED=1
  exec flock "$IMAGES/build.lock" "$0" "$@"
fi
export CONTAINERS_STORAGE_CONF=$IMAGES/storage.conf BUILDAH_ISOLATION=chroot
[ -f "$CONTAINERS_STORAGE_CONF" ] || printf '[storage]\ndriver = "overlay"\nrunroot = "%s/cs/run"\ngraphroot = "%s/cs/graph"\n' "$IMAGES" "$IMAGES" > "$CONTAINERS_STORAGE_CONF"
cleanup_mounts() { mountpoint -q "$IMAGES/cs/graph/overlay" && umount "$IMAGES/cs/graph/overlay" 2>/dev/null; return 0; }
trap cleanup_mounts EXIT

archive() { echo "$IMAGES/archives/$(echo "$1" | tr '/:' '__')-$2.tar"; }   # archive NAME DIGEST
# every image here is built on the base, so the base's key is part of each context digest
# CTX_EXTRA_KEY: what else the image is made of, for one built FROM another of ours (dev-relay)
ctx_digest() { { (cd "$1" && find . -type f ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum); echo "$BASE_KEY${CTX_EXTRA_KEY:-}"; } | sha256sum | cut -c1-16; }
have_archive() { ls "$IMAGES/archives/$(echo "$1" | tr '/:' '__')"-*.tar >/dev/null 2>&1; }

# buildah_build NAME CONTEXT DOCKERFILE [build-args...]: build unless an archive for this context exists
buildah_build() {
  local name=$1 ctx=$2 df=$3; shift 3
  local dig; dig=$(ctx_digest "$ctx")
  local out; out=$(archive "$name" "$dig")
  [ -f "$out" ] && return 0
  log "building $name"
  local args=(); for a in "$@"; do args+=(--build-arg "$a"); done
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    docker build -q -t "$name" -f "$df" "${args[@]}" "$ctx" >/dev/null
    docker save "$name" -o "$out.tmp"
  else
    buildah bud -q --pull=never --layers=false -t "$name" -f "$df" "${args[@]}" "$ctx" >/dev/null \
      || die "building $name failed (buildah bud -f $df $ctx)"
    rm -f "$out.tmp"; buildah push -q "$name" "oci-archive:$out.tmp:$name" >/dev/null
  fi
  rm -f "$IMAGES/archives/$(echo "$name" | tr '/:' '__')"-*.tar; mv "$out.tmp" "$out"
}

build_pause() {
  have_archive "$PAUSE_IMAGE" && return 0
  [ -x "$BIN/pause" ] || bash "$(dirname "$0")/build-k8s.sh"
  local r; r=$(mktemp -d); cp "$BIN/pause" "$r/"
  python3 "$ROOT/hack/mkoci.py" "$r" "$(archive "$PAUSE_IMAGE" 0)" "$PAUSE_IMAGE" /pause; rm -rf "$r"
}

build_base() {
  [ -f "$(archive "$BASE_IMAGE" "$BASE_KEY")" ] && buildah inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
  need_disk "$IMAGES" 1500 "the base image"
  log "building $BASE_IMAGE with debootstrap (about a minute)"
  local mirror; mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  local r=$IMAGES/rootfs; rm -rf "$r"
  debootstrap --variant=minbase --include="$BASE_PACKAGES" \
    bookworm "$r" "$mirror" > "$IMAGES/debootstrap.log" 2>&1 || die "debootstrap failed; see $IMAGES/debootstrap.log"
  rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/*
  tar --numeric-owner -C "$r" -cf "$IMAGES/rootfs.tar" . && rm -rf "$r"
  local c; c=$(buildah from scratch)
  buildah add -q "$c" "$IMAGES/rootfs.tar" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8 --cmd /bin/bash "$c"
  buildah commit -q --rm "$c" "$BASE_IMAGE" >/dev/null; rm -f "$IMAGES/rootfs.tar"
  local out; out=$(archive "$BASE_IMAGE" "$BASE_KEY")
  rm -f "$out.tmp"; buildah push -q "$BASE_IMAGE" "oci-archive:$out.tmp:$BASE_IMAGE" >/dev/null
  rm -f "$IMAGES/archives/$(echo "$BASE_IMAGE" | tr '/:' '__')"-*.tar; mv "$out.tmp" "$out"
}

# The operator image carries the package and its dependencies as a site-packages tree staged
# here with pip (cp311 wheels fit Debian's python3.11), so the image build needs no network.
stage_operator() {
  local ctx=$IMAGES/ctx/operator
  local src; src=$( (cd "$ROOT" && sha256sum pyproject.toml && find operator tasks manifests -type f ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)
  if [ "$(cat "$ctx/.source" 2>/dev/null)" != "$src" ]; then
    rm -rf "$ctx"; mkdir -p "$ctx"
    PIP_CACHE_DIR=$CACHE/pip "$ROOT/.venv/bin/pip" install -q --no-compile --target "$ctx/site-packages" "$ROOT" 2>&1 | grep -v '^WARNING: Location' || true
    [ -d "$ctx/site-packages/buzz_operator" ] || die "staging the operator's site-packages failed"
    cp -a "$ROOT/tasks" "$ctx/tasks"
    cp -a "$ROOT/manifests" "$ctx/manifests"
    cp "$ROOT/images/operator/Dockerfile" "$ctx/Dockerfile"
    echo "$src" > "$ctx/.source"
  fi
}

stage_stack() {
  local ctx=$IMAGES/ctx/stack
  rm -rf "$ctx"; mkdir -p "$ctx"
  "$ROOT/.venv/bin/python" -m buzz_operator.dev.stack.build "$ctx/stack" >/dev/null || die "assembling the agent stack failed"
  cp "$ROOT/images/stack/Dockerfile" "$ctx/Dockerfile"
}

# A folder-layout stack image of the user's own binaries: checked and staged by
# buzz_operator.dev.stack.from_binaries, built on the base with images/stack/Dockerfile (the
# stand-in's), tagged by its content digest unless BUZZ_STACK_IMAGE_NAME names it, so a rebuilt
# folder never moves a tag a sweep already ran.
build_stack_image() {
  local dir=${1:-}
  [ -n "$dir" ] || die "usage: make stack-image BUZZ_BIN_DIR=/path/to/linux/binaries"
  local ctx=$IMAGES/ctx/stack-user
  rm -rf "$ctx"; mkdir -p "$ctx"
  "$ROOT/.venv/bin/python" -m buzz_operator.dev.stack.from_binaries "$dir" "$ctx/stack" \
    --ca-bundle "${BUZZ_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" || die "BUZZ_BIN_DIR $dir cannot become a stack image (above)"
  cp "$ROOT/images/stack/Dockerfile" "$ctx/Dockerfile"
  build_base
  local name=${BUZZ_STACK_IMAGE_NAME:-docker.io/buzz/stack-user:$(ctx_digest "$ctx")}
  buildah_build "$name" "$ctx" "$ctx/Dockerfile" "BASE_IMAGE=$BASE_IMAGE"
  if [ -S "$CTRD_SOCK" ]; then "$0" import; else log "containerd is not running: 'make cluster-up', then 'hack/images.sh import'"; fi
  log "stack image $name (layout folder); in a BuzzSweep: spec.stack: {image: $name, layout: folder}"
  echo "$name"
}

build_one() {
  case $1 in
    pause) build_pause ;;
    base) build_base ;;
    operator) build_base; stage_operator
      buildah_build "$OPERATOR_IMAGE" "$IMAGES/ctx/operator" "$IMAGES/ctx/operator/Dockerfile" "BASE_IMAGE=$BASE_IMAGE" ;;
    # its context is one Dockerfile: keyed by the operator's context too, or the relay would keep
    # running the dev relay code of its first build
    dev-relay) build_one operator
      CTX_EXTRA_KEY=$(ctx_digest "$IMAGES/ctx/operator") \
        buildah_build "$RELAY_IMAGE" "$ROOT/images/dev-relay" "$ROOT/images/dev-relay/Dockerfile" "OPERATOR_IMAGE=$OPERATOR_IMAGE" ;;
    stack) build_base; stage_stack
      buildah_build "$STACK_IMAGE" "$IMAGES/ctx/stack" "$IMAGES/ctx/stack/Dockerfile" "BASE_IMAGE=$BASE_IMAGE" ;;
    tasks) build_base
      for t in "$ROOT"/tasks/*/; do
        t=$(basename "$t"); [ -f "$ROOT/tasks/$t/environment/Dockerfile" ] || continue
        local tag; tag=$("$ROOT/.venv/bin/python" -c "import sys; from buzz_operator.dataset import load_task; print(load_task(sys.argv[1]).image_ref(sys.argv[2], 'builtin'))" "$ROOT/tasks/$t" "$TASK_REGISTRY")
        buildah_build "$tag" "$ROOT/tasks/$t/environment" "$ROOT/tasks/$t/environment/Dockerfile" "BASE_IMAGE=$BASE_IMAGE"
      done ;;
    *) die "unknown image '$1' (known: base pause operator stack dev-relay tasks)" ;;
  esac
}

case "${1:-build}" in
build)
  need_root; shift || true
  bash "$(dirname "$0")/deps.sh"
  for n in ${@:-pause base}; do build_one "$n"; done
  [ -S "$CTRD_SOCK" ] && "$0" import
  ;;
import)
  [ -S "$CTRD_SOCK" ] || die "containerd is not running; run 'make cluster-up'"
  have=$(ctr -a "$CTRD_SOCK" -n k8s.io images ls -q 2>/dev/null)
  for a in "$IMAGES"/archives/*.tar; do
    [ -f "$a" ] || continue
    n=$(tar -xOf "$a" index.json | python3 -c 'import json,sys; m=json.load(sys.stdin)["manifests"][0]["annotations"]; print(m.get("io.containerd.image.name") or m["org.opencontainers.image.ref.name"])')
    # a re-built archive replaces the image of the same name
    if ! grep -qxF "$n" <<<"$have" || [ "$a" -nt "$IMAGES/archives/.imported-$(basename "$a")" ]; then
      ctr -a "$CTRD_SOCK" -n k8s.io images import --all-platforms "$a" >/dev/null || die "importing $a into containerd failed"
      touch "$IMAGES/archives/.imported-$(basename "$a")"
    fi
  done
  ;;
list)
  echo "$PAUSE_IMAGE $BASE_IMAGE $OPERATOR_IMAGE $STACK_IMAGE $RELAY_IMAGE" | tr ' ' '\n'
  ;;
stack-image)
  need_root; bash "$(dirname "$0")/deps.sh"
  build_stack_image "${2:-}"
  ;;
context)
  need_root; bash "$(dirname "$0")/deps.sh"
  [ -n "${2:-}" ] && [ -f "${3:-}/Dockerfile" ] || die "usage: hack/images.sh context NAME DIR (DIR/Dockerfile)"
  build_base; buildah_build "$2" "$3" "$3/Dockerfile" "BASE_IMAGE=$BASE_IMAGE"
  "$0" import
  ;;
*) die "usage: hack/images.sh build [NAME...] | import | list | stack-image DIR | context NAME DIR" ;;
esac
