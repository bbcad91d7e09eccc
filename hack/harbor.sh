#!/bin/bash
# Harbor's own package in a virtualenv of its own, so tests can ask Harbor's code whether it reads
# what the operator writes (docs/harbor.md).
#   hack/harbor.sh venv     create it once (idempotent); prints the venv's python
#   hack/harbor.sh python   the venv's python, creating the venv first when it is missing
# harbor needs Python >= 3.12 and pulls in a large dependency tree (litellm, openai, docker, ...)
# whose pins have nothing to do with the product's, so it never goes into the project's .venv.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HARBOR_SPEC=('harbor==0.25.0')
VENV=$CACHE/harbor-venv
STAMP=$VENV/.installed-$(printf '%s ' "${HARBOR_SPEC[@]}" | sha256sum | cut -c1-16)

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

ensure_venv() {
  [ -f "$STAMP" ] && return 0
  need_disk "$CACHE" 800 "Harbor's virtualenv"
  local py
  py=$(find_python) || die "harbor needs Python >= 3.12 and none was found (set HARBOR_PYTHON to one)"
  tool_venv "$VENV" "$py" "$CACHE/harbor-venv-pip.log" "${HARBOR_SPEC[@]}"
}

case "${1:-venv}" in
venv|python)
  mkdir -p "$CACHE"
  # one caller at a time: parallel test workers may all ask for the venv at once
  exec 9>"$CACHE/.harbor-venv.lock"; flock 9
  ensure_venv
  echo "$VENV/bin/python"
  ;;
*) die "usage: hack/harbor.sh venv|python" ;;
esac
