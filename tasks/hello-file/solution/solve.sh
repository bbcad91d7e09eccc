#!/usr/bin/env bash
# Oracle solution. BUZZ_APP_DIR stands in for /app when the unit tests run it on the host.
set -euo pipefail
app_dir="${BUZZ_APP_DIR:-/app}"
mkdir -p "$app_dir"
printf 'Hello, world!\n' > "$app_dir/hello.txt"
