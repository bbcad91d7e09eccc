#!/bin/bash
# Create the project's virtualenv (.venv in the clone) and install the package with its dev extras.
# Re-runs are cheap: pip is called only when pyproject.toml changed since the last install.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "Python >= 3.11 is needed ($PY is $($PY -V 2>&1))"
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)
[ -f "$stamp" ] && exit 0
log "creating .venv and installing buzz-operator[dev]"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
export PIP_CACHE_DIR=$CACHE/pip PIP_DISABLE_PIP_VERSION_CHECK=1
.venv/bin/pip install -q -e '.[dev]' || die "pip install failed; see the output above"
rm -f .venv/.installed-*; touch "$stamp"
