#!/bin/bash
# Prints the path of a kind >= $KIND_MIN: the one on PATH when it is new enough, else kind
# v$KIND_VERSION built once from the Go module proxy into $CACHE/kind (hack/lib.sh).
# Why >= 0.24: its kindnet enforces NetworkPolicy in kindest/node clusters.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
KIND_MIN=0.24.0
if command -v kind >/dev/null 2>&1; then
  have=$(kind version | sed -n 's/^kind v\([0-9.]*\).*/\1/p')
  if [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$KIND_MIN" "$have" | sort -V | head -1)" = "$KIND_MIN" ]; then
    command -v kind; exit 0
  fi
  log "kind $have on PATH is older than $KIND_MIN; using v$KIND_VERSION built here"
fi
bin=$CACHE/kind/v$KIND_VERSION/kind
[ -x "$bin" ] || log "building kind v$KIND_VERSION from the Go module proxy (once, about a minute)"
go_tool_build kind sigs.k8s.io/kind "$KIND_VERSION" sigs.k8s.io/kind "$bin" "$CACHE/kind/v$KIND_VERSION" 600
echo "$bin"
