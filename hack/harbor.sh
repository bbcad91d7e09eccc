#!/bin/bash
# Harbor's own package in virtualenvs of its own, one per release, so tests can ask each release's
# code whether it reads what the operator writes (docs/harbor.md#how-it-is-tested).
#   hack/harbor.sh releases          the releases the Harbor tier runs under, oldest first: the pinned
#                                    ones, and the newest the package index serves when it is newer
#   hack/harbor.sh venv [RELEASE]    create its venv once (idempotent); prints the venv's python
#   hack/harbor.sh python [RELEASE]  the same (RELEASE defaults to the newest pinned)
# harbor needs Python >= 3.12 and pulls in a large dependency tree (litellm, openai, docker, ...)
# whose pins have nothing to do with the product's, so it never goes into the project's .venv.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# 0.25 wrote a failure cause per exception name; 0.26 an ErrorPolicy with per-exception overrides
# and counts only valid rewards. Both are read by users' tools today.
PINNED=(0.25.0 0.26.0)

# The first Python >= 3.12 found: $HARBOR_PYTHON, then python3.13/3.12 on PATH, then pyenv's.
find_python() {
  local candidate
  for candidate in "${HARBOR_PYTHON:-}" python3.13 python3.12 python3 \
      "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || [ -x "$candidate" ] || continue
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

venv_of() { echo "$CACHE/harbor-$1-venv"; }

ensure_venv() {
  local release=$1 venv; venv=$(venv_of "$1")
  need_disk "$CACHE" 800 "Harbor $release's virtualenv"
  local py
  py=$(find_python) || die "harbor needs Python >= 3.12 and none was found (set HARBOR_PYTHON to one)"
  tool_venv "$venv" "$py" "$CACHE/harbor-$release-pip.log" "harbor==$release"
  rm -rf "$CACHE/harbor-venv"  # the one-release layout before this one
}

# The newest release the index serves, asked with the newest pinned venv's pip; nothing when the
# index cannot be asked (the pinned releases still run, and stderr says so).
newest_served() {
  local pip; pip=$(dirname "$(ensure_venv_quiet "${PINNED[-1]}")")/pip
  PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 60 "$pip" index versions harbor 2>/dev/null \
    | sed -n 's/^harbor (\(.*\))$/\1/p' | head -1
}

ensure_venv_quiet() { ensure_venv "$1" >/dev/null; echo "$(venv_of "$1")/bin/python"; }

newer() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$1" ] && [ "$1" != "$2" ]; }

mkdir -p "$CACHE"
# one caller at a time: parallel test workers may all ask for a venv at once
exec 9>"$CACHE/.harbor-venv.lock"; flock 9
case "${1:-venv}" in
releases)
  printf '%s\n' "${PINNED[@]}"
  served=$(newest_served || true)
  if [ -z "$served" ]; then
    echo "harbor.sh: the package index could not be asked for a newer harbor; the pinned releases only" >&2
  elif newer "$served" "${PINNED[-1]}"; then
    echo "$served"
  fi
  ;;
venv|python)
  ensure_venv_quiet "${2:-${PINNED[-1]}}"
  ;;
*) die "usage: hack/harbor.sh releases | venv [RELEASE] | python [RELEASE]" ;;
esac
