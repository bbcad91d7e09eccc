#!/bin/bash
# The kind node image the project builds (docs/local-cluster.md#kind): Debian 12 with systemd,
# the project's containerd 2.x, Debian's runc and CNI plugins, and the Kubernetes $K8S_VERSION
# binaries hack/build-k8s.sh makes (kubelet, kubeadm, kubectl), plus, as OCI archives imported at
# the node's first boot, every image its `kubeadm init` and its pod network start: the control
# plane's and kube-proxy's (the same build), etcd and CoreDNS (kubeadm's own versions, built
# from the Go module proxy), the pause image and kube-router. Built without a
# daemon: debootstrap for the root filesystems, hack/mkoci.py for the archives. Loaded into the
# container engine kind uses (Docker when its daemon answers, else podman).
#   kind-node.sh          build what is missing, load it; prints the node image's reference
#   kind-node.sh ref      print the reference only
#   kind-node.sh images   print the component images the node carries
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NODE_FILES=$ROOT/hack/kind/node
W=$CACHE/kind/node-v$K8S_VERSION          # rootfs tars, archives, the node image archive
ETCD_TAG=$KIND_ETCD_VERSION-0             # the tag kubeadm asks for
COMPONENTS_IMAGES="registry.k8s.io/kube-apiserver:v$K8S_VERSION registry.k8s.io/kube-controller-manager:v$K8S_VERSION
registry.k8s.io/kube-scheduler:v$K8S_VERSION registry.k8s.io/kube-proxy:v$K8S_VERSION registry.k8s.io/etcd:$ETCD_TAG
registry.k8s.io/coredns/coredns:v$COREDNS_VERSION $PAUSE_IMAGE $KIND_ROUTER_IMAGE"
# the node's own packages; the netbase ones are what kube-proxy and kube-router need around
# their binaries (iptables and ipset)
NODE_PACKAGES=systemd,systemd-sysv,dbus,iptables,ipset,iproute2,ethtool,socat,conntrack,ebtables,kmod,util-linux,mount,ca-certificates,procps,runc,containernetworking-plugins,libseccomp2
NETBASE_PACKAGES=iptables,ipset,iproute2,conntrack,kmod,ca-certificates

case "${1:-build}" in
ref) echo "$KIND_NODE_IMAGE"; exit 0 ;;
images) echo "$COMPONENTS_IMAGES" | tr ' ' '\n'; exit 0 ;;
build) ;;
*) die "usage: hack/kind-node.sh [build|ref|images]" ;;
esac
need_root
mkdir -p "$W/archives"
. "$ROOT/hack/rootfs.sh"

# the content key of the node: what it is built from (its files, packages, versions); a change
# rebuilds it, an unchanged one is loaded from $W
key=$( { (cd "$NODE_FILES" && find . -type f -print0 | sort -z | xargs -0 sha256sum); cat "$0" "$ROOT/hack/mkoci.py" "$ROOT/hack/rootfs.sh";
         echo "$NODE_PACKAGES $NETBASE_PACKAGES $K8S_VERSION $CONTAINERD_VERSION $COREDNS_VERSION $KIND_ETCD_VERSION $KUBE_ROUTER_VERSION $PAUSE_IMAGE"; } | sha256sum | cut -c1-16)
node_archive=$W/kind-node-$key.tar

# component NAME REF ENTRYPOINT BASE_TAR FILE=DEST...: one of the images the node carries
component() { local name=$1 ref=$2 entry=$3 base=$4; shift 4; oci_archive "$W/archives/$name.tar" "$key" "$ref" "$entry" "$base" -- "$@"; }

if [ ! -f "$node_archive" ]; then
  bash "$ROOT/hack/deps.sh"
  bash "$ROOT/hack/build-k8s.sh" kubeadm
  bash "$ROOT/hack/build-containerd.sh"
  bash "$ROOT/hack/build-netpol.sh"
  etcd=$CACHE/etcd-v$KIND_ETCD_VERSION/etcd
  [ -x "$etcd" ] || log "building etcd v$KIND_ETCD_VERSION from the Go module proxy (once, about 3 minutes)"
  go_tool_build etcd go.etcd.io/etcd/server/v3 "$KIND_ETCD_VERSION" go.etcd.io/etcd/server/v3 "$etcd" "$CACHE/etcd-v$KIND_ETCD_VERSION" 2000
  coredns=$CACHE/coredns-v$COREDNS_VERSION/coredns
  [ -x "$coredns" ] || log "building CoreDNS v$COREDNS_VERSION from the Go module proxy (once, about 5 minutes)"
  go_tool_build coredns github.com/coredns/coredns "$COREDNS_VERSION" github.com/coredns/coredns "$coredns" "$CACHE/coredns-v$COREDNS_VERSION" 3000
  bash "$ROOT/hack/images.sh" build pause
  netbase=$(rootfs_tar netbase "$NETBASE_PACKAGES")
  node_root=$(rootfs_tar node "$NODE_PACKAGES")
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    component "$c" "registry.k8s.io/$c:v$K8S_VERSION" "/usr/local/bin/$c" "" "$K8S_BIN/$c=usr/local/bin/$c"
  done
  component kube-proxy "registry.k8s.io/kube-proxy:v$K8S_VERSION" /usr/local/bin/kube-proxy "$netbase" "$K8S_BIN/kube-proxy=usr/local/bin/kube-proxy"
  component etcd "registry.k8s.io/etcd:$ETCD_TAG" /usr/local/bin/etcd "" "$etcd=usr/local/bin/etcd"
  component coredns "registry.k8s.io/coredns/coredns:v$COREDNS_VERSION" /coredns "" "$coredns=coredns"
  component kube-router "$KIND_ROUTER_IMAGE" /usr/local/bin/kube-router "$netbase" "$KUBE_ROUTER=usr/local/bin/kube-router"

  log "assembling the node image $KIND_NODE_IMAGE"
  r=$W/ctx-node; rm -rf "$r"; mkdir -p "$r"
  tar -C "$r" -xf "$node_root"
  cp -a "$NODE_FILES"/. "$r"/
  # the manifest names kube-router's image at the version hack/lib.sh builds
  sed -i "s#docker.io/buzz/kube-router:v[0-9.]*#$KIND_ROUTER_IMAGE#" "$r/kind/manifests/default-cni.yaml"
  for b in kubelet kubeadm kubectl; do install -m 0755 "$K8S_BIN/$b" "$r/usr/bin/$b"; done
  for b in containerd containerd-shim-runc-v2 ctr; do install -m 0755 "$CTRD_BUILT_BIN/$b" "$r/usr/local/bin/$b"; done
  mkdir -p "$r/kind/images" "$r/etc/containerd" "$r/etc/cni/net.d" "$r/opt/cni"
  cp "$W"/archives/*.tar "$r/kind/images/"
  cp "$IMAGES/archives/$(echo "$PAUSE_IMAGE" | tr '/:' '__')"-*.tar "$r/kind/images/pause.tar"
  ln -sfn /usr/lib/cni "$r/opt/cni/bin"   # where CNI plugins are looked for by default
  echo "v$K8S_VERSION" > "$r/kind/version"   # kind reads the node's Kubernetes version here
  # containerd's own defaults, with the systemd cgroup driver (kind's kubelet uses it), the
  # pause image the node carries, Debian's CNI plugin directory, and restrict_oom_score_adj as
  # in the local cluster (docs/local-cluster.md#cgroup-v1): root on these machines lacks
  # CAP_SYS_RESOURCE, so the pause container's oom_score_adj of -998 cannot be set, and without
  # it every pod sandbox fails ("can't get final child's PID from pipe: EOF")
  "$CTRD_BUILT_BIN/containerd" config default \
    | sed -e 's/SystemdCgroup = false/SystemdCgroup = true/' \
          -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' \
          -e "s#sandbox = 'registry.k8s.io/pause[^']*'#sandbox = '$PAUSE_IMAGE'#" \
          -e "s#bin_dirs = \\['/opt/cni/bin'\\]#bin_dirs = ['/usr/lib/cni']#" > "$r/etc/containerd/config.toml"
  grep -q "SystemdCgroup = true" "$r/etc/containerd/config.toml" && grep -q "sandbox = '$PAUSE_IMAGE'" "$r/etc/containerd/config.toml" \
    && grep -q "restrict_oom_score_adj = true" "$r/etc/containerd/config.toml" \
    || die "containerd's default config no longer has the SystemdCgroup, restrict_oom_score_adj and sandbox lines hack/kind-node.sh edits"
  # units: containerd, the image import, the kubelet; systemd's own units that make no sense in
  # a container are masked (a getty on a console nobody reads, udev without devices to manage)
  for u in containerd buzz-kind-images kubelet; do
    ln -sfn "/etc/systemd/system/$u.service" "$r/etc/systemd/system/multi-user.target.wants/$u.service"
  done
  for u in getty@tty1.service console-getty.service systemd-udevd.service systemd-udev-trigger.service \
           systemd-modules-load.service systemd-resolved.service apt-daily.timer apt-daily-upgrade.timer; do
    ln -sfn /dev/null "$r/etc/systemd/system/$u"
  done
  : > "$r/etc/machine-id"   # made per node by the entrypoint
  python3 "$ROOT/hack/mkoci.py" --stop-signal SIGRTMIN+3 "$r" "$node_archive.tmp" "$KIND_NODE_IMAGE" \
    /usr/local/bin/entrypoint /sbin/init
  mv "$node_archive.tmp" "$node_archive"; rm -rf "$r"
  find "$W" -maxdepth 1 -name 'kind-node-*.tar' ! -name "$(basename "$node_archive")" -delete
fi

# into the engine kind will use, unless it already holds this very build
engine=$(kind_engine)
kind_engine_env "$engine"
loaded=$W/.loaded-$engine-$key
if [ ! -f "$loaded" ] || ! "$engine" image inspect "$KIND_NODE_IMAGE" >/dev/null 2>&1; then
  log "loading $KIND_NODE_IMAGE into $engine"
  "$engine" load -q -i "$node_archive" >/dev/null || die "$engine load of $node_archive failed"
  rm -f "$W"/.loaded-"$engine"-*; touch "$loaded"
fi
echo "$KIND_NODE_IMAGE"
