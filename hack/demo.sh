#!/bin/bash
# make demo: the embedded default stack (local cluster, Postgres, dev relay, file object store),
# the operator, and the sample sweeps of the buzz-native tasks with the stand-in agents.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
need_root
T0=$(date +%s)
bash "$ROOT/hack/venv.sh"
bash "$ROOT/hack/cluster-up.sh"
bash "$ROOT/hack/postgres.sh" up
bash "$ROOT/hack/images.sh" build pause base operator dev-relay stack tasks
export PATH="$BIN:$PATH"
PYTHONUNBUFFERED=1 "$ROOT/.venv/bin/python" -m buzz_operator.dev.demo --pg-dsn "$(bash "$ROOT/hack/postgres.sh" dsn)" \
  --host-ip "$(host_ip)" --log "$RUN/logs/operator-demo.log"
# the results as a person reads them: from the bundles in storage alone (no cluster needed)
read -r STORE SWEEPS <<<"$("$ROOT/.venv/bin/python" -c 'from buzz_operator.dev.demo import DEMO_STORE, SWEEPS; print(DEMO_STORE.as_uri(), *SWEEPS)')"
for sweep in $SWEEPS; do
  "$ROOT/.venv/bin/buzzctl" sweep results "$sweep" --store "$STORE" --failures
  "$ROOT/.venv/bin/buzzctl" report "$sweep" --store "$STORE" --html "$RUN/reports/$sweep.html"
done
# last, the two stand-in conditions that differ, compared (docs/statistics.md): the difference in
# pass rate with its interval and p-value, and which verifier dimensions fell
"$ROOT/.venv/bin/buzzctl" report demo-oracle demo-naive --store "$STORE" --html "$RUN/reports/demo-oracle-vs-demo-naive.html"
"$ROOT/.venv/bin/buzzctl" compare demo-oracle demo-naive --store "$STORE"
# and the plan of the next one (docs/statistics.md#planning): with the oracle as the pilot, the
# tasks x attempts that detect a drop of 0.2, and what the demo's own size (its tasks, 2 attempts) detects
"$ROOT/.venv/bin/buzzctl" plan --pilot demo-oracle --store "$STORE" -d -0.2 --attempts 2
log "make demo took $(( $(date +%s) - T0 ))s in all; the cluster stays up ('make cluster-down' stops it)"
