# Shared settings for the local stack scripts. Sourced, never executed.
# Everything heavy lives outside the clone so a fresh clone on the same machine reuses it.
CACHE=${BUZZ_CACHE:-$HOME/.cache/buzz-operator}
# Kubernetes built from the Go module proxy (hack/build-k8s.sh); docs/local-cluster.md says why
# this version. BUZZ_K8S_VERSION picks another served release (e.g. the oldest supported minor).
K8S_VERSION=${BUZZ_K8S_VERSION:-1.37.2}
K8S=$CACHE/k8s                 # build trees and binaries, one directory per version
K8S_BIN=$K8S/v$K8S_VERSION/bin
BIN=$K8S_BIN
# Packages taken from a named Debian suite, unpacked (hack/debian-pkgs.sh), whatever the machine runs
DEBIAN_EXTRA_SUITE=trixie
DEBIAN_EXTRA_PKGS="etcd-server etcd-client containerd"
KUBE_ROUTER_VERSION=2.1.0      # NetworkPolicy enforcer (hack/build-netpol.sh says why this one)
KUBE_ROUTER_LIFTS="golang.org/x/net@v0.62.0 golang.org/x/crypto@v0.59.0 google.golang.org/protobuf@v1.36.12"
KUBE_ROUTER=$K8S/kube-router-$KUBE_ROUTER_VERSION/kube-router
GO_ROOT=${BUZZ_GO_ROOT:-/usr/local/go}   # the machine's Go (>= 1.26); Debian's golang-go is too old
RUN=${BUZZ_RUN:-/var/tmp/buzz-operator}   # state of the running stack (pki, pids, logs, data); readable by the postgres user
KUBECONFIG_PATH=$RUN/pki/kubeconfig
IMAGES=$CACHE/images
BR=${BUZZ_BRIDGE:-buzzbr0}
POD_CIDR=${BUZZ_POD_CIDR:-10.244.77.0/24}
SERVICE_CIDR=${BUZZ_SERVICE_CIDR:-10.96.77.0/24}
API_PORT=${BUZZ_API_PORT:-6443}
ETCD_PORT=${BUZZ_ETCD_PORT:-2379}
ETCD_PEER_PORT=${BUZZ_ETCD_PEER_PORT:-2380}
PG_PORT=${BUZZ_PG_PORT:-55432}
S3_PORT=${BUZZ_S3_PORT:-59000}
REGISTRY_PORT=${BUZZ_REGISTRY_PORT:-5443}   # the image registry, on the host's address (hack/registry.sh)
# containerd's registry hosts directory (config_path): hack/registry.sh writes its CA there; kept
# out of $RUN/containerd, which every cluster-up starts afresh
HOSTS_DIR=$RUN/registry-hosts
# kind-based testing (hack/kind-up.sh, hack/kind-node.sh; docs/local-cluster.md#kind): kind built from
# the Go module proxy unless one this new is on PATH, and the node image the project builds
KIND_VERSION=0.33.0
KIND_NODE_IMAGE=${BUZZ_KIND_NODE_IMAGE:-docker.io/buzz/kind-node:v$K8S_VERSION}
KIND_ROUTER_IMAGE=docker.io/buzz/kube-router:v$KUBE_ROUTER_VERSION
COREDNS_VERSION=1.14.6         # kubeadm $K8S_VERSION's own CoreDNS (`kubeadm config images list`)
KIND_ETCD_VERSION=3.7.0        # kubeadm $K8S_VERSION's own etcd (its flags: --feature-gates, which 3.5 lacks)
# kind_engine: the container engine kind drives, Docker when its daemon answers, else podman
kind_engine() {
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then echo docker
  elif command -v podman >/dev/null 2>&1; then echo podman
  else die "kind needs a container engine: Docker with a running daemon, or podman (make deps installs it)"; fi
}
# kind_engine_env ENGINE: what kind and the engine need in the environment. For podman: kind's
# podman provider, and a containers.conf of the project's own (CONTAINERS_CONF; /etc is left
# alone): Debian 12's podman 4.3 gives containers default ulimits this machine's limits refuse
# ("setrlimit RLIMIT_NOFILE: Operation not permitted"), and crun, its first-choice runtime,
# refuses a cgroup v1 host ("cgroups in hybrid mode not supported"); runc runs both. Its image
# and volume store is kept under $CACHE/kind/podman (CONTAINERS_STORAGE_CONF) with the other
# caches, its runtime state in $RUN/podman; both files live in $CACHE/kind, where tests read them.
kind_engine_env() {
  [ "$1" = podman ] || return 0
  export KIND_EXPERIMENTAL_PROVIDER=podman
  mkdir -p "$CACHE/kind"
  printf '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n' > "$CACHE/kind/containers.conf"
  printf '[storage]\ndriver = "overlay"\nrunroot = "%s"\ngraphroot = "%s"\n' "$RUN/podman" "$CACHE/kind/podman" > "$CACHE/kind/storage.conf"
  export CONTAINERS_CONF=$CACHE/kind/containers.conf CONTAINERS_STORAGE_CONF=$CACHE/kind/storage.conf
}
# shared_netns_dir: /run/netns made a mount point of its own with shared propagation, as
# iproute2 (`ip netns add`) and podman make it, before any pod's network namespace is mounted in
# it. Whoever finds it a plain directory bind-mounts it onto itself first: when the local
# cluster's pods were already mounted there (containerd's CNI leaves it a plain directory) and
# podman (kind) came second, podman's layer hid them, and `ip netns delete` of a pod's namespace
# then failed "Device or resource busy" (docs/local-cluster.md#kind). Made here first, both
# stacks find a mount point, make it shared, and mount into the one layer.
# With namespaces already mounted in the plain directory a layer would hide them too: then it is
# left as it is, and says so.
shared_netns_dir() {
  mkdir -p /run/netns
  if ! mountpoint -q /run/netns; then
    if awk '$5 ~ "^/run/netns/" {found=1} END {exit !found}' /proc/self/mountinfo; then
      log "/run/netns holds network namespaces but is no mount point: left as it is (a layer now would hide them)"
      return 0
    fi
    mount --bind /run/netns /run/netns || return 1
  fi
  mount --make-shared /run/netns
}
K8S_BINARIES="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"

die() { echo "error: $*" >&2; exit 1; }
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
need_root() { [ "$(id -u)" = 0 ] || die "the local stack needs root (it runs a kubelet, containerd and iptables); run as root"; }

# A free-disk check before anything large: a half-finished Go build on a full disk
# fails with a confusing linker error, so say so up front.
need_disk() {  # need_disk DIR MB WHAT
  mkdir -p "$1"
  local free; free=$(df -Pm "$1" | awk 'NR==2{print $4}')
  [ "$free" -ge "$2" ] || die "$3 needs ${2} MB free under $1 but only ${free} MB are free; free some disk (or set BUZZ_CACHE to a bigger disk) and retry"
}

# reserve_ports PORT...: keep the kernel from handing the services' fixed ports to outgoing
# connections. PG_PORT and S3_PORT lie inside the ephemeral range (32768-60999): a kubelet
# connection to the apiserver was once given 127.0.0.1:59000 and the S3 server then could not
# bind it ("Address already in use" with nothing listening). Idempotent; a no-op without root.
reserve_ports() {
  local f=/proc/sys/net/ipv4/ip_local_reserved_ports cur p
  [ -w "$f" ] || return 0
  cur=$(cat "$f")
  for p in "$@"; do
    case ",$cur," in *",$p,"*) ;; *) cur=${cur:+$cur,}$p ;; esac
  done
  echo "$cur" >"$f"
}

# port_free PORT NAME: refuse to start when something else already listens there
port_free() {
  if ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; then
    local who; who=$(ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:(("\([^"]*\)".*/\1/p' | head -1)
    die "port $1 (needed by $2) is already in use${who:+ by $who}; stop it or set the matching BUZZ_*_PORT variable"
  fi
}
# The cluster's containerd: BUZZ_CONTAINERD_VERSION, a 2.x release built from the Go module proxy
# (hack/build-containerd.sh), 2.2.9 unless set — image volumes need >= 2.1 (docs/stack.md#mount);
# `1.7` runs Debian 13's instead. Each keeps its own image store: 2.x migrates the metadata it
# opens, which 1.7 then could not read. CONTAINERD_VERSION is empty for Debian's.
DEFAULT_CONTAINERD_VERSION=2.2.9
CONTAINERD_VERSION=${BUZZ_CONTAINERD_VERSION:-$DEFAULT_CONTAINERD_VERSION}
[ "$CONTAINERD_VERSION" = 1.7 ] && CONTAINERD_VERSION=
# image store kept across cluster-down, so images are imported once
CTRD_ROOT=$CACHE/containerd${CONTAINERD_VERSION:+-$CONTAINERD_VERSION/root}
CTRD_BUILT_BIN=$CACHE/containerd-$CONTAINERD_VERSION/bin   # where build-containerd.sh puts a 2.x
# gVisor (hack/build-gvisor.sh): the go branch as the Go module proxy serves it, resolved 2026-12-04
GVISOR_VERSION=${BUZZ_GVISOR_VERSION:-v0.0.0-20260905035102-160fafc42237}
CTRD_SOCK=$RUN/containerd/state/containerd.sock
COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy kube-router"
PAUSE_IMAGE=registry.k8s.io/pause:3.6   # the pod sandbox image (hack/images.sh builds it from the release's pause.c)
export KUBECONFIG=${KUBECONFIG_OVERRIDE:-$KUBECONFIG_PATH}

# host_ip: the address pods use to reach the host (apiserver endpoint, host services)
host_ip() { ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -1; }
# stop_pid PID NAME: a service of ours stopped, TERM, then KILL after 10 s; returns once it is gone
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  die "${2:-process} pid $pid did not exit after SIGKILL"
}
pid_alive() { [ -f "$RUN/pids/$1.pid" ] && kill -0 "$(cat "$RUN/pids/$1.pid")" 2>/dev/null; }
kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" "$@"; }
# ctr of the containerd the cluster runs (Debian 13's, unpacked by hack/debian-pkgs.sh, or the built 2.x)
ctr() {
  if [ -n "$CONTAINERD_VERSION" ]; then "$CTRD_BUILT_BIN/ctr" "$@"
  else "$CACHE/debian/$DEBIAN_EXTRA_SUITE/current/containerd/usr/bin/ctr" "$@"; fi
}
SYSCTLS="net/ipv4/ip_forward net/bridge/bridge-nf-call-iptables"   # set by cluster-up, restored by cluster-down
# need_cmd CMD DEBIAN_PACKAGE: name the missing package and the fix instead of failing later
need_cmd() { command -v "$1" >/dev/null 2>&1 || die "$1 not found; it comes with the Debian package $2: run 'make deps' (or apt-get install $2)"; }

# use_go: the machine's Go with the module and build caches under $CACHE, never Debian's Go
use_go() {
  [ -x "$GO_ROOT/bin/go" ] || die "Go not found at $GO_ROOT/bin/go (set BUZZ_GO_ROOT to a Go >= 1.26)"
  export PATH="$GO_ROOT/bin:$PATH" GOTOOLCHAIN=local GOPATH="$CACHE/go" GOMODCACHE="$CACHE/go/pkg/mod" \
         GOCACHE="$CACHE/go/build-cache" GOFLAGS=-modcacherw GO111MODULE=on
  unset GOROOT
}

# go_tool_build NAME MODULE VERSION PACKAGE BIN DIR DISK_MB: a Go program built once from the Go
# module proxy into BIN (kept while it exists), in a scratch module under DIR/src whose go.mod
# pins MODULE vVERSION (hack/kueue.sh reads the module's source from there), with a build cache of
# its own under DIR, removed afterwards. For the tools the local stack builds: kueue, kwok, versitygw.
go_tool_build() {
  local name=$1 module=$2 version=$3 package=$4 bin=$5 dir=$6 disk=$7
  [ -x "$bin" ] && return 0
  need_disk "$CACHE" "$disk" "the $name build"
  (
    use_go
    local w=$dir/src
    mkdir -p "$w" "$(dirname "$bin")"
    cd "$w"
    export GOCACHE=$dir/gocache
    if ! grep -qs "$module v$version" go.mod; then
      rm -f go.mod go.sum
      go mod init "buzz-operator.local/$name-build" >/dev/null 2>&1
      go get "$package@v$version" > "$w/get.log" 2>&1 \
        || { tail -20 "$w/get.log" >&2; die "resolving $module v$version failed; is the Go module proxy reachable? log in $w/get.log"; }
    fi
    CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" -o "$bin.tmp" "$package" > "$w/build.log" 2>&1 \
      || { tail -30 "$w/build.log" >&2; die "$name build failed; full log in $w/build.log"; }
    mv "$bin.tmp" "$bin"
    rm -rf "$GOCACHE"
  )
}

# tool_venv VENV PYTHON LOG SPEC...: a virtualenv of its own for a test tool whose dependency pins
# must stay out of the project's .venv (botocore, harbor's tree); made once per SPEC (a
# stamp keyed by it), and a half-made one from an interrupted run is thrown away, not patched.
tool_venv() {
  local venv=$1 py=$2 pip_log=$3; shift 3
  local stamp; stamp=$venv/.installed-$(printf '%s ' "$@" | sha256sum | cut -c1-16)
  [ -f "$stamp" ] && return 0
  log "creating $venv with $* using $py (once)"
  rm -rf "$venv"
  "$py" -m venv "$venv" || die "could not create $venv with $py"
  # pip's output goes to a log: it is long, and only worth reading when the install fails
  PIP_CACHE_DIR=$CACHE/pip PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install -q "$@" >"$pip_log" 2>&1 \
    || { tail -20 "$pip_log" >&2; rm -rf "$venv"; die "pip install $* failed; see $pip_log"; }
  touch "$stamp"
}
