#!/usr/bin/env bash
# Writes reward.txt: 1 if /app/hello.txt reads "Hello, world!" (surrounding whitespace ignored),
# else 0. BUZZ_APP_DIR and BUZZ_VERIFIER_DIR override the container paths so the unit tests can
# run this very script against a temporary directory.
set -euo pipefail

app_dir="${BUZZ_APP_DIR:-/app}"
verifier_dir="${BUZZ_VERIFIER_DIR:-/logs/verifier}"
mkdir -p "$verifier_dir"

reward=$(python3 - "$app_dir/hello.txt" <<'PY'
import sys
from pathlib import Path

path = Path(sys.argv[1])
try:
    text = path.read_text(encoding="utf-8")
except (OSError, UnicodeDecodeError) as error:
    print(f"cannot read {path}: {error}", file=sys.stderr)
    print(0)
else:
    ok = text.strip() == "Hello, world!"
    print(f"{path}: {'matches' if ok else 'does not match'}", file=sys.stderr)
    print(1 if ok else 0)
PY
)
echo "$reward" > "$verifier_dir/reward.txt"
echo "reward: $reward"
