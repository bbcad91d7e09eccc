#!/bin/bash
# Single-node Kubernetes $K8S_VERSION on this machine (docs/local-cluster.md): etcd 3.5 from
# Debian 13, containerd 2.2.9 built from the Go module proxy (BUZZ_CONTAINERD_VERSION=1.7: Debian
# 13's), runc from Debian 12, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet and kube-proxy (iptables mode) built from the Go module proxy, and
# kube-router's firewall enforcing NetworkPolicy; Pod Security admission is on (the apiserver's
# default plugins). All state is under $RUN. A second run is a no-op.
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
bash "$HERE/build-netpol.sh"
bash "$HERE/debian-pkgs.sh"
ETCD_ROOT=$(bash "$HERE/debian-pkgs.sh" path etcd-server)/usr/bin
ETCDCTL=$(bash "$HERE/debian-pkgs.sh" path etcd-client)/usr/bin/etcdctl
if [ -n "$CONTAINERD_VERSION" ]; then
  bash "$HERE/build-containerd.sh"
  CTRD_BIN=$(bash "$HERE/build-containerd.sh" path)
else
  CTRD_BIN=$(bash "$HERE/debian-pkgs.sh" path containerd)/usr/bin
fi
for p in $API_PORT:kube-apiserver $ETCD_PORT:etcd $ETCD_PEER_PORT:etcd 10250:kubelet 10248:kubelet \
         10257:kube-controller-manager 10259:kube-scheduler 10256:kube-proxy 10249:kube-proxy 20244:kube-router; do
  port_free "${p%%:*}" "${p#*:}"
done
# before any component dials out, so none takes a service port as its own (hack/lib.sh)
reserve_ports "$PG_PORT" "$S3_PORT"
ip link show "$BR" >/dev/null 2>&1 && die "network bridge $BR already exists (a stack started by someone else?); run 'make cluster-down' or set BUZZ_BRIDGE"
need_disk "$RUN" 1000 "the cluster"
HOST_IP=$(host_ip); [ -n "$HOST_IP" ] || die "cannot find this machine's primary IPv4 address (ip route get failed)"

trap 'rc=$?; if [ $rc != 0 ]; then log "cluster-up failed; tearing down what started (logs in $RUN/logs)"; bash "$HERE/cluster-down.sh" --keep-logs >/dev/null 2>&1; fi' EXIT
rm -rf "$RUN/etcd" "$RUN/kubelet" "$RUN/pki" "$RUN/containerd" "$RUN/cni"
mkdir -p "$RUN"/{pki,pids,logs,etcd,kubelet,cni,containerd/state,sysctl} "$CTRD_ROOT" "$HOSTS_DIR"
shared_netns_dir || die "cannot make /run/netns a shared mount point (the pods' network namespaces live there)"
ln -sfn "$K8S_BIN" "$RUN/bin"   # the running cluster's kubectl, for tests and the demo
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
# the apiserver's client certificate towards the kubelet (exec, logs): the kubelet authenticates it
# by the cluster CA and authorizes it by webhook (SubjectAccessReview), as on a real node
openssl req -newkey rsa:2048 -nodes -keyout apiserver-kubelet-client.key -out apiserver-kubelet-client.csr \
  -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" 2>/dev/null
openssl x509 -req -in apiserver-kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver-kubelet-client.crt -days 30 2>/dev/null
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

need_cmd runc runc; need_cmd iptables iptables; need_cmd ipset ipset
start etcd "$ETCD_ROOT/etcd" --data-dir "$RUN/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync
waitfor "ETCDCTL_API=3 $ETCDCTL --endpoints=127.0.0.1:$ETCD_PORT endpoint health" 120 etcd; el etcd ready
# the apiserver advertises the host address so pods reach it through the `kubernetes` Service
start kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" --bind-address=0.0.0.0 \
  --advertise-address="$HOST_IP" --secure-port="$API_PORT" \
  --tls-cert-file=apiserver.crt --tls-private-key-file=apiserver.key --client-ca-file=ca.crt \
  --token-auth-file=tokens.csv --authorization-mode=Node,RBAC --allow-privileged=true \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local --service-account-key-file=sa.pub \
  --service-account-signing-key-file=sa.key --service-cluster-ip-range="$SERVICE_CIDR" \
  --kubelet-preferred-address-types=Hostname --enable-admission-plugins=NodeRestriction \
  --kubelet-client-certificate=apiserver-kubelet-client.crt --kubelet-client-key=apiserver-kubelet-client.key
waitfor "[ \"\$(kc get --raw /readyz)\" = ok ]" 240 "etcd kube-apiserver"; el apiserver ready
KCARGS="--kubeconfig=$KUBECONFIG_PATH --authentication-kubeconfig=$KUBECONFIG_PATH --authorization-kubeconfig=$KUBECONFIG_PATH --bind-address=127.0.0.1 --leader-elect=false"
# shellcheck disable=SC2086
start kube-controller-manager "$BIN/kube-controller-manager" $KCARGS --secure-port=10257 --controllers='*' \
  --service-account-private-key-file=sa.key --root-ca-file=ca.crt --cluster-signing-cert-file=ca.crt \
  --cluster-signing-key-file=ca.key --use-service-account-credentials=true \
  --allocate-node-cidrs=true --cluster-cidr="$POD_CIDR" --node-cidr-mask-size="${POD_CIDR#*/}" \
  --service-cluster-ip-range="$SERVICE_CIDR"
# shellcheck disable=SC2086
start kube-scheduler "$BIN/kube-scheduler" $KCARGS --secure-port=10259

cat > "$RUN/cni/10-buzz.conflist" <<CNI
{"cniVersion":"0.4.0","name":"buzz-pods","plugins":[{"type":"bridge","bridge":"$BR","isGateway":true,"ipMasq":false,"hairpinMode":true,
 "ipam":{"type":"host-local","dataDir":"$RUN/cni/ipam","ranges":[[{"subnet":"$POD_CIDR"}]],"routes":[{"dst":"0.0.0.0/0"}]}},{"type":"loopback"}]}
CNI
# The same five edits to either default config: 1.7 prints version 2 (double quotes, sandbox_image,
# bin_dir), 2.x prints version 3 (single quotes, pinned_images' sandbox, bin_dirs).
"$CTRD_BIN/containerd" config default | sed -e "s#/var/lib/containerd#$CTRD_ROOT#; s#/run/containerd#$RUN/containerd/state#" \
  -e "s#/opt/containerd#$RUN/containerd/opt#" \
  -e 's#bin_dir = "/opt/cni/bin"#bin_dir = "/usr/lib/cni"#' -e "s#conf_dir = \"/etc/cni/net.d\"#conf_dir = \"$RUN/cni\"#" \
  -e "s#bin_dirs = \\['/opt/cni/bin'\\]#bin_dirs = ['/usr/lib/cni']#" -e "s#conf_dir = '/etc/cni/net.d'#conf_dir = '$RUN/cni'#" \
  -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' \
  -e "s#config_path = ''#config_path = '$HOSTS_DIR'#" -e "s#config_path = \"\"#config_path = \"$HOSTS_DIR\"#" \
  -e "s#sandbox_image = .*#sandbox_image = \"$PAUSE_IMAGE\"#" \
  -e "s#sandbox = 'registry.k8s.io/pause[^']*'#sandbox = '$PAUSE_IMAGE'#" > "$RUN/containerd/config.toml"
grep -Eq "sandbox(_image)? = [\"']$PAUSE_IMAGE[\"']" "$RUN/containerd/config.toml" \
  || die "containerd's default config has no sandbox image line to point at $PAUSE_IMAGE"
grep -q "config_path = .$HOSTS_DIR" "$RUN/containerd/config.toml" \
  || die "containerd's default config has no registry config_path line to point at $HOSTS_DIR (hack/registry.sh)"
grep -Eq "/usr/lib/cni" "$RUN/containerd/config.toml" || die "containerd's default config has no CNI bin directory line to point at /usr/lib/cni"
# gVisor's runsc as a second runtime handler (docs/isolation.md#gvisor); built once, cached. A
# cluster without it still runs every runc trial (the demo needs none), so a failed build warns;
# a sweep naming gvisor is then refused by its preflight, naming spec.runtimeClassName
GVISOR=yes
bash "$HERE/gvisor.sh" containerd "$RUN/containerd/config.toml" \
  || { GVISOR=; log "WARNING: no gVisor on this cluster (the build or its config failed, above); trials run under runc only"; }
# containerd finds its shim on PATH, and the shim finds runc there (Debian 12's, /usr/sbin)
PATH="$CTRD_BIN:$PATH" start containerd "$CTRD_BIN/containerd" --config "$RUN/containerd/config.toml"
waitfor "$CTRD_BIN/ctr -a $CTRD_SOCK version" 120 containerd; el containerd ready
bash "$HERE/images.sh" import
el images imported
# This machine's cgroups are v1 (hybrid). Kubelets from 1.35 refuse to start there unless
# failCgroupV1 is false; cgroupfs is the driver because systemd is not PID 1.
cat > "$RUN/kubelet/config.yaml" <<KCFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$CTRD_SOCK
address: 127.0.0.1
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
maxPods: 110
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "100Mi"}
# The node holds the project's images twice: imported under docker.io/buzz/* names and pulled
# from the local registry (hack/registry.sh) with a login. The kubelet's default
# (NeverVerifyPreloadedImages) keys its pull records by image ID, so once a pod pulled an image
# with a login, every pod naming the same content under its imported name must prove a login for
# it too — by pulling from docker.io, which this machine cannot reach. Tests that prove a login
# is checked pull with imagePullPolicy Always (docs/registry.md#the-kubelets-credential-check).
imagePullCredentialsVerificationPolicy: NeverVerify
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $RUN/pki/ca.crt}
authorization: {mode: Webhook}
KCFG
start kubelet "$BIN/kubelet" --kubeconfig="$KUBECONFIG_PATH" --config="$RUN/kubelet/config.yaml" \
  --root-dir="$RUN/kubelet" --cert-dir="$RUN/kubelet/pki" --hostname-override=localhost --node-ip="$HOST_IP"
start kube-proxy "$BIN/kube-proxy" --kubeconfig="$KUBECONFIG_PATH" --proxy-mode=iptables --cluster-cidr="$POD_CIDR" \
  --hostname-override=localhost --bind-address=127.0.0.1 --healthz-bind-address=127.0.0.1:10256 \
  --metrics-bind-address=127.0.0.1:10249 --conntrack-max-per-core=0
waitfor "kc wait --for=condition=Ready node/localhost --timeout=2s" 240 "kubelet kube-apiserver"; el node Ready
# kube-proxy's first sync must not overlap kube-router's start: both edit the filter table's
# INPUT/FORWARD/OUTPUT chains, and one overlap left kube-proxy's sync failed ("Chain
# 'KUBE-NODEPORTS' does not exist") until its 30 s retry; 240 rounds cover that retry too
waitfor "iptables -t nat -S KUBE-SERVICES | grep -q default/kubernetes" 240 kube-proxy; el "kube-proxy rules present"
# NetworkPolicy: kube-router's firewall controller only (the bridge CNI routes, kube-proxy serves
# Services); it starts once its Node exists, whose pod CIDR it reads
start kube-router "$KUBE_ROUTER" --kubeconfig="$KUBECONFIG_PATH" --run-firewall=true --run-router=false \
  --run-service-proxy=false --run-loadbalancer=false --hostname-override=localhost --health-port=20244 \
  --metrics-port=0 --enable-ipv6=false --service-cluster-ip-range="$SERVICE_CIDR"
waitfor "curl -sf http://127.0.0.1:20244/healthz" 120 kube-router; el "kube-router healthy"
waitfor "iptables -S INPUT | grep -q KUBE-NODEPORTS" 240 kube-proxy   # kube-proxy's jumps survived its start
waitfor "kc get sa default -o name" 120 kube-controller-manager; el "default serviceaccount present"
[ -z "$GVISOR" ] || bash "$HERE/gvisor.sh" runtimeclass
trap - EXIT
log "cluster up: export KUBECONFIG=$KUBECONFIG_PATH"
