#!/bin/bash
# Stop the local stack and remove every trace of it: processes, pods' network namespaces, mounts,
# the bridge, KUBE-/CNI- iptables chains, pod cgroups, and the runtime state under $RUN.
# Adapted from shared/reference/k8s-test-infra.md Appendix D. Safe to run when nothing is up.
#   --keep-logs   keep $RUN/logs (used when cluster-up fails, so the reason can be read)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
stop() { local f=$RUN/pids/$1.pid; [ -f "$f" ] || return 0; local p; p=$(cat "$f")
  kill "$p" 2>/dev/null; for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$p" 2>/dev/null; rm -f "$f"; }
if pid_alive kubelet && kc get --raw /readyz >/dev/null 2>&1; then
  # let the kubelet do CNI DEL and unmount volumes while it still can
  timeout 90 "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" delete pods --all -A --grace-period=1 --wait=true --timeout=60s >/dev/null 2>&1 || true
fi
stop kwok   # fake nodes' lifecycle simulator, when a benchmark started it (hack/kwok.sh)
stop kube-router
stop kube-proxy
stop kubelet
if [ -S "$CTRD_SOCK" ]; then
  for t in $(timeout 20 ctr -a "$CTRD_SOCK" -n k8s.io tasks ls -q 2>/dev/null); do timeout 20 ctr -a "$CTRD_SOCK" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
  sleep 1
  for t in $(timeout 20 ctr -a "$CTRD_SOCK" -n k8s.io tasks ls -q 2>/dev/null); do timeout 20 ctr -a "$CTRD_SOCK" -n k8s.io tasks rm -f "$t" >/dev/null 2>&1; done
  for c in $(timeout 20 ctr -a "$CTRD_SOCK" -n k8s.io containers ls -q 2>/dev/null); do timeout 20 ctr -a "$CTRD_SOCK" -n k8s.io containers rm "$c" >/dev/null 2>&1; done
fi
stop containerd
# shims outlive containerd when it is killed; they belong to this stack if they use its state dir
pkill -9 -f "containerd-shim.*$RUN/containerd" 2>/dev/null
for n in $(ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do ip netns delete "$n"; done
# every image store's mounts, whichever containerd (BUZZ_CONTAINERD_VERSION) this cluster ran
for root in "$RUN" "$CACHE/containerd" "$CACHE"/containerd-*/root; do
  grep -o " $root[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
done
for p in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop $p; done
ip link del "$BR" 2>/dev/null
for t in nat filter mangle raw; do
  for c in $(iptables -t $t -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/{print $2}'); do iptables -t $t -F "$c"; done
  iptables -t $t -S 2>/dev/null | awk '/^-A [A-Z]+ .*-j (KUBE-|CNI-)/' | sed 's/^-A/-D/' | while read -r r; do eval iptables -t $t "$r"; done
  for c in $(iptables -t $t -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/{print $2}'); do iptables -t $t -X "$c" 2>/dev/null; done
done
# kube-router's ipsets (KUBE-SRC-*, KUBE-DST-*, kube-router-*), once no rule refers to them
for s in $(ipset list -n 2>/dev/null | grep -E '^(KUBE-|kube-router)'); do ipset destroy "$s" 2>/dev/null; done
# A pod sandbox the kubelet started while the stack was going down can outlive its killed shim
# (a /pause reparented to init, seen once with Kueue's manager installed): nothing of a pod may
# stay, and a cgroup with a process in it cannot be removed.
for h in /sys/fs/cgroup/*/; do for g in kubepods k8s.io; do
  [ -d "$h$g" ] && find "$h$g" -name cgroup.procs -exec cat {} + 2>/dev/null; done; done |
  sort -u | while read -r pid; do kill -9 "$pid" 2>/dev/null; done
sleep 0.2
for h in /sys/fs/cgroup/*/; do for g in kubepods k8s.io; do
  [ -d "$h$g" ] && find "$h$g" -depth -type d -exec rmdir {} \; 2>/dev/null; done; done
for s in $SYSCTLS; do
  f=$RUN/sysctl/$(echo "$s" | tr / _); [ -f "$f" ] && cat "$f" > "/proc/sys/$s" 2>/dev/null
done
rm -rf /var/log/pods/* /var/log/containers/* /var/lib/cni/results/buzz-pods-* 2>/dev/null
if [ "${1:-}" = --keep-logs ]; then
  find "$RUN" -mindepth 1 -maxdepth 1 ! -name logs ! -name postgres ! -name s3 ! -name registry -exec rm -rf {} + 2>/dev/null
else
  find "$RUN" -mindepth 1 -maxdepth 1 ! -name postgres ! -name s3 ! -name registry -exec rm -rf {} + 2>/dev/null
fi
# the services started beside the cluster go down with it
timeout 60 bash "$HERE/postgres.sh" down >/dev/null 2>&1
[ -f "$HERE/s3.sh" ] && timeout 60 bash "$HERE/s3.sh" down >/dev/null 2>&1
[ -f "$HERE/registry.sh" ] && timeout 60 bash "$HERE/registry.sh" down >/dev/null 2>&1
rmdir "$RUN" 2>/dev/null
log "cluster down"
exit 0
