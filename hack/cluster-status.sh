#!/bin/bash
# Say what of the local stack runs: each component's process, the API, the node, the services.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
for c in $COMPONENTS; do
  if pid_alive "$c"; then printf '%-24s running (pid %s)\n' "$c" "$(cat "$RUN/pids/$c.pid")"
  else printf '%-24s stopped\n' "$c"; fi
done
if kc get --raw /readyz >/dev/null 2>&1; then
  printf '%-24s ready (KUBECONFIG=%s)\n' api "$KUBECONFIG_PATH"
  kc get nodes --no-headers 2>/dev/null | awk '{printf "%-24s %s %s\n", "node/" $1, $2, $5}'
  printf '%-24s %s\n' pods "$(kc get pods -A --no-headers 2>/dev/null | wc -l) in all namespaces"
else
  printf '%-24s unreachable\n' api
fi
bash "$HERE/postgres.sh" status
[ -f "$HERE/s3.sh" ] && bash "$HERE/s3.sh" status
[ -f "$HERE/registry.sh" ] && bash "$HERE/registry.sh" status
bash "$HERE/gvisor.sh" status
exit 0
