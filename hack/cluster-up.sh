#!/bin/bash
# Single-node Kubernetes v1.20.2 on this machine: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, containerd + runc, kubelet and kube-proxy (iptables mode), all state under $RUN.
# Adapted from shared/reference/k8s-test-infra.md Appendix C. A second run is a no-op.
# Any failure tears down what this run started, so nothing is left half-started.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
need_root

all_up() { for c in $COMPONENTS; do pid_alive "$c" || return 1; done
           kc get --raw /readyz >/dev/null 2>&1; }
if all_up; then log "cluster already up (KUBECONFIG=$KUBECONFIG_PATH)"; exit 0; fi
if ls "$RUN"/pids/*.pid >/dev/null 2>&1; then
  log "a previous cluster is partly running; tearing it down first"
  bash "$HERE/cluster-down.sh"
fi
bash "$HERE/deps.sh"
bash "$HERE/build-k8s.sh"
for p in $API_PORT:kube-apiserver $ETCD_PORT:etcd $ETCD_PEER_PORT:etcd 10250:kubelet 10248:kubelet \
         10257:kube-controller-manager 10259:kube-scheduler 10256:kube-proxy 10249:kube-proxy; do
  port_free "${p%%:*}" "${p#*:}"
done
ip link show "$BR" >/dev/null 2>&1 && die "network bridge $BR already exists (a stack started by someone else?); run 'make cluster-down' or set BUZZ_BRIDGE"
need_disk "$RUN" 1000 "the cluster"
HOST_IP=$(host_ip); [ -n "$HOST_IP" ] || die "cannot find this machine's primary IPv4 address (ip route get failed)"

trap 'rc=$?; if [ $rc != 0 ]; then log "cluster-up failed; tearing down what started (logs in $RUN/logs)"; bash "$HERE/cluster-down.sh" --keep-logs >/dev/null 2>&1; fi' EXIT
rm -rf "$RUN/etcd" "$RUN/kubelet" "$RUN/pki" "$RUN/containerd" "$RUN/cni"
mkdir -p "$RUN"/{pki,pids,logs,etcd,kubelet,cni,containerd/state,sysctl} "$CTRD_ROOT"
T0=$(date +%s.%N); el() { log "$(printf '%5.1fs %s' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*")"; }
start() { local n=$1; shift; nohup "$@" > "$RUN/logs/$n.log" 2>&1 & echo $! > "$RUN/pids/$n.pid"; }
waitfor() { local i; for i in $(seq 1 "${2:-120}"); do eval "$1" >/dev/null 2>&1 && return 0
  for c in $3; do pid_alive "$c" || { tail -20 "$RUN/logs/$c.log" >&2; die "$c exited during start-up; see $RUN/logs/$c.log"; }; done
  sleep 0.5; done; die "timed out waiting for: $1"; }

# pods reach Services through kube-proxy's iptables rules, which need forwarding and bridged
# traffic to pass netfilter; remember the old values so cluster-down restores them
for s in $SYSCTLS; do
  [ -e "/proc/sys/$s" ] && cat "/proc/sys/$s" > "$RUN/sysctl/$(echo $s | tr / _)"; echo 1 > "/proc/sys/$s"
done

cd "$RUN/pki"
SVC_IP=$(echo "$SERVICE_CIDR" | sed 's#\.0/.*#.1#')
openssl genrsa -out sa.key 2048 2>/dev/null; openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj /CN=buzz-local-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:%s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' "$HOST_IP" "$SVC_IP" > san.ext
openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 30 -extfile san.ext 2>/dev/null
TOKEN=$(openssl rand -hex 16); echo "$TOKEN,admin,admin,system:masters" > tokens.csv; chmod 600 tokens.csv
cat > kubeconfig <<KC
apiVersion: v1
kind: Config
clusters: [{name: buzz-local, cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: $RUN/pki/ca.crt}}]
users: [{name: admin, user: {token: $TOKEN}}]
contexts: [{name: buzz-local, context: {cluster: buzz-local, user: admin, namespace: default}}]
current-context: buzz-local
KC
chmod 600 kubeconfig

need_cmd etcd etcd-server; need_cmd containerd containerd; need_cmd runc runc; need_cmd iptables iptables
start etcd etcd --data-dir "$RUN/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync
waitfor "ETCDCTL_API=3 etcdctl --endpoints=127.0.0.1:$ETCD_PORT endpoint health" 120 etcd; el etcd ready
# the apiserver advertises the host address so pods reach it through the `kubernetes` Service
start kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" --bind-address=0.0.0.0 \
  --advertise-address="$HOST_IP" --secure-port="$API_PORT" --insecure-port=0 \
  --tls-cert-file=apiserver.crt --tls-private-key-file=apiserver.key --client-ca-file=ca.crt \
  --token-auth-file=tokens.csv --authorization-mode=Node,RBAC --allow-privileged=true \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local --service-account-key-file=sa.pub \
  --service-account-signing-key-file=sa.key --service-cluster-ip-range="$SERVICE_CIDR" \
  --kubelet-preferred-address-types=Hostname --enable-admission-plugins=NodeRestriction,ServiceAccount
waitfor "[ \"\$(kc get --raw /readyz)\" = ok ]" 240 "etcd kube-apiserver"; el apiserver ready
KCARGS="--kubeconfig=$KUBECONFIG_PATH --authentication-kubeconfig=$KUBECONFIG_PATH --authorization-kubeconfig=$KUBECONFIG_PATH --bind-address=127.0.0.1 --port=0 --leader-elect=false"
# shellcheck disable=SC2086
start kube-controller-manager "$BIN/kube-controller-manager" $KCARGS --secure-port=10257 --controllers='*' \
  --service-account-private-key-file=sa.key --root-ca-file=ca.crt --cluster-signing-cert-file=ca.crt \
  --cluster-signing-key-file=ca.key --use-service-account-credentials=true
# shellcheck disable=SC2086
start kube-scheduler "$BIN/kube-scheduler" $KCARGS --secure-port=10259

cat > "$RUN/cni/10-buzz.conflist" <<CNI
{"cniVersion":"0.4.0","name":"buzz-pods","plugins":[{"type":"bridge","bridge":"$BR","isGateway":true,"ipMasq":false,"hairpinMode":true,
 "ipam":{"type":"host-local","dataDir":"$RUN/cni/ipam","ranges":[[{"subnet":"$POD_CIDR"}]],"routes":[{"dst":"0.0.0.0/0"}]}},{"type":"loopback"}]}
CNI
containerd config default | sed -e "s#/var/lib/containerd#$CTRD_ROOT#; s#/run/containerd#$RUN/containerd/state#" \
  -e "s#/opt/containerd#$RUN/containerd/opt#" \
  -e 's#bin_dir = "/opt/cni/bin"#bin_dir = "/usr/lib/cni"#' -e "s#conf_dir = \"/etc/cni/net.d\"#conf_dir = \"$RUN/cni\"#" \
  -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' > "$RUN/containerd/config.toml"
start containerd containerd --config "$RUN/containerd/config.toml"
waitfor "ctr -a $CTRD_SOCK version" 120 containerd; el containerd ready
bash "$HERE/images.sh" import
el images imported
start kubelet "$BIN/kubelet" --kubeconfig="$KUBECONFIG_PATH" --container-runtime=remote \
  --container-runtime-endpoint="unix://$CTRD_SOCK" --image-service-endpoint="unix://$CTRD_SOCK" --root-dir="$RUN/kubelet" \
  --cert-dir="$RUN/kubelet/pki" --cgroup-driver=cgroupfs --fail-swap-on=false --hostname-override=localhost \
  --node-ip="$HOST_IP" --address=127.0.0.1 --read-only-port=0 --healthz-bind-address=127.0.0.1 --max-pods=110 \
  --image-gc-high-threshold=100 --image-gc-low-threshold=99 '--eviction-hard=memory.available<100Mi' \
  --pod-infra-container-image=registry.k8s.io/pause:3.6
start kube-proxy "$BIN/kube-proxy" --kubeconfig="$KUBECONFIG_PATH" --proxy-mode=iptables --cluster-cidr="$POD_CIDR" \
  --hostname-override=localhost --bind-address=127.0.0.1 --healthz-bind-address=127.0.0.1:10256 \
  --metrics-bind-address=127.0.0.1:10249 --conntrack-max-per-core=0
waitfor "kc wait --for=condition=Ready node/localhost --timeout=2s" 240 "kubelet kube-apiserver"; el node Ready
waitfor "kc get sa default -o name" 120 kube-controller-manager; el "default serviceaccount present"
waitfor "iptables -t nat -S KUBE-SERVICES | grep -q default/kubernetes" 120 kube-proxy; el "kube-proxy rules present"
trap - EXIT
log "cluster up: export KUBECONFIG=$KUBECONFIG_PATH"
