#!/bin/bash
# The image registry of the local stack (docs/registry.md): the CNCF distribution registry
# (github.com/distribution/distribution/v3), built once from the Go module proxy, serving HTTPS on
# $HOST_IP:$BUZZ_REGISTRY_PORT with a certificate of its own CA and htpasswd (bcrypt) logins.
#   hack/registry.sh build|up|down|status|address|push|dockerconfig|hosts-dir|forget
# `up` also writes the CA into containerd's registry hosts directory ($HOSTS_DIR, which
# cluster-up points containerd's config_path at), so the node trusts the registry and nothing
# else does: no system trust store is touched. `push` copies every image archive hack/images.sh
# built (daemonless, skopeo) to <address>/<path without its registry>:<tag>, e.g.
# docker.io/buzz/stack:dev -> $HOST_IP:5443/buzz/stack:dev. `dockerconfig` prints the
# .dockerconfigjson a kubernetes.io/dockerconfigjson Secret needs (it holds the password: keep it
# out of logs). The registry keeps what it stored under $RUN/registry/data across restarts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
REGISTRY_VERSION=${BUZZ_REGISTRY_VERSION:-3.1.2}
REG=$CACHE/registry
REG_BIN=$REG/v$REGISTRY_VERSION/registry
D=$RUN/registry
DATA=$D/data
PKI=$D/pki
PIDF=$D/server.pid
USER_NAME=buzz
START_TIMEOUT=${BUZZ_REGISTRY_START_TIMEOUT:-60}

address() {
  local ip; ip=$(host_ip); [ -n "$ip" ] || die "cannot find this machine's primary IPv4 address (ip route get failed)"
  echo "$ip:$REGISTRY_PORT"
}

build() {
  [ -x "$REG_BIN" ] && return 0
  log "building the distribution registry v$REGISTRY_VERSION from the Go module proxy (cold: about 80 s on 2 cores)"
  go_tool_build registry github.com/distribution/distribution/v3 "$REGISTRY_VERSION" \
    github.com/distribution/distribution/v3/cmd/registry "$REG_BIN" "$REG" 1500
}

# A CA of the registry's own and a server certificate for the address (IP SAN) and localhost;
# renewed when the address changed (a machine given another IP) or when it expires within a day.
certificates() {
  local addr=$1 ip=${1%:*}
  mkdir -p "$PKI"; chmod 700 "$PKI"
  if [ ! -f "$PKI/ca.crt" ] || ! openssl x509 -checkend 86400 -noout -in "$PKI/ca.crt" >/dev/null 2>&1; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=buzz-operator local registry CA" \
      -keyout "$PKI/ca.key" -out "$PKI/ca.crt" >/dev/null 2>&1 || die "making the registry's CA failed"
    rm -f "$PKI/tls.crt"
  fi
  if [ ! -f "$PKI/tls.crt" ] || [ "$(cat "$PKI/tls.ip" 2>/dev/null)" != "$ip" ] \
     || ! openssl x509 -checkend 86400 -noout -in "$PKI/tls.crt" >/dev/null 2>&1; then
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$ip" -keyout "$PKI/tls.key" -out "$PKI/tls.csr" >/dev/null 2>&1
    printf 'subjectAltName=IP:%s,IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' "$ip" > "$PKI/tls.ext"
    openssl x509 -req -in "$PKI/tls.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial -days 90 \
      -extfile "$PKI/tls.ext" -out "$PKI/tls.crt" >/dev/null 2>&1 || die "signing the registry's certificate failed"
    echo "$ip" > "$PKI/tls.ip"
  fi
  # what skopeo (--dest-cert-dir) and containerd (hosts.toml) trust: the CA alone
  mkdir -p "$D/trust"; cp "$PKI/ca.crt" "$D/trust/ca.crt"
}

# One login, its password random and kept 0600 under $D; the htpasswd file holds its bcrypt hash
# (the registry accepts no other scheme). Python's crypt with glibc's libxcrypt makes $2b$ hashes.
credentials() {
  if [ ! -s "$D/password" ]; then
    (umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$D/password")
    rm -f "$D/htpasswd"
  fi
  if [ ! -s "$D/htpasswd" ]; then
    (umask 077; python3 -W ignore -c 'import crypt, sys; print(sys.argv[1] + ":" + crypt.crypt(open(sys.argv[2]).read().strip(), crypt.mksalt(crypt.METHOD_BLOWFISH)))' \
      "$USER_NAME" "$D/password" > "$D/htpasswd")
    grep -q "^$USER_NAME:\$2" "$D/htpasswd" || die "making the registry's bcrypt htpasswd failed (python3's crypt has no bcrypt here)"
  fi
  dockerconfig "$1" > "$D/auth.json.tmp"; chmod 600 "$D/auth.json.tmp"; mv "$D/auth.json.tmp" "$D/auth.json"
}

dockerconfig() {
  python3 -c 'import base64, json, sys
user, password = sys.argv[2], open(sys.argv[3]).read().strip()
token = base64.b64encode(f"{user}:{password}".encode()).decode()
print(json.dumps({"auths": {sys.argv[1]: {"auth": token}}}))' "$1" "$USER_NAME" "$D/password"
}

# containerd's registry hosts directory (config_path): <host:port>/hosts.toml naming the CA. Read
# at each pull, so it needs no containerd restart; cluster-up sets config_path to $HOSTS_DIR.
hosts_toml() {
  local addr=$1
  mkdir -p "$HOSTS_DIR/$addr"
  printf 'server = "https://%s"\n\n[host."https://%s"]\n  capabilities = ["pull", "resolve"]\n  ca = "%s"\n' \
    "$addr" "$addr" "$D/trust/ca.crt" > "$HOSTS_DIR/$addr/hosts.toml"
}

server_pid() {
  [ -f "$PIDF" ] || return 1
  local pid args; pid=$(cat "$PIDF")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  args=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  [[ $args == *registry" serve $D/config.yml"* ]] || return 1
  echo "$pid"
}
# /v2/ without a login answers 401: an answer over TLS the CA verifies means it serves
answers() {
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$D/trust/ca.crt" "https://$1/v2/")" = 401 ]
}
running() { server_pid >/dev/null && [ "$(cat "$D/address" 2>/dev/null)" = "$(address)" ] && answers "$(address)"; }

up() {
  mkdir -p "$D"
  local addr; addr=$(address)
  if running; then hosts_toml "$addr"; return 0; fi
  local old
  if old=$(server_pid); then log "replacing unresponsive registry pid $old"; stop_pid "$old" "registry"; fi
  rm -f "$PIDF"
  port_free "$REGISTRY_PORT" "the image registry"
  build
  certificates "$addr"
  credentials "$addr"
  mkdir -p "$DATA"
  cat > "$D/config.yml" <<CFG
version: 0.1
log: {level: warn, formatter: text, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $DATA}, delete: {enabled: true}}
http:
  addr: $addr
  secret: $(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  tls: {certificate: $PKI/tls.crt, key: $PKI/tls.key}
auth:
  htpasswd: {realm: buzz-operator-local, path: $D/htpasswd}
CFG
  chmod 600 "$D/config.yml"
  # setsid and fd 9 closed: as hack/s3.sh's server, it outlives this script and holds no lock
  OTEL_TRACES_EXPORTER=none setsid "$REG_BIN" serve "$D/config.yml" >"$D/server.log" 2>&1 </dev/null 9>&- &
  local pid=$!
  echo "$pid" >"$PIDF"; echo "$addr" >"$D/address"
  trap 'kill -KILL "$pid" 2>/dev/null; rm -f "$PIDF"; exit 130' INT TERM HUP
  local deadline=$((SECONDS + START_TIMEOUT))
  until answers "$addr"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDF"; tail -5 "$D/server.log" >&2; die "the registry exited during start; see $D/server.log"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      stop_pid "$pid" "registry"; rm -f "$PIDF"; tail -5 "$D/server.log" >&2
      die "the registry did not answer on https://$addr within ${START_TIMEOUT}s; stopped it; see $D/server.log"
    fi
    sleep 0.1
  done
  trap - INT TERM HUP
  hosts_toml "$addr"
  log "registry (distribution v$REGISTRY_VERSION) up on https://$addr (htpasswd login $USER_NAME), data in $DATA"
}

down() {
  local pid
  if pid=$(server_pid); then stop_pid "$pid" "registry"; fi
  rm -f "$PIDF"
}

# The registry's name for an archive's image: its repository path without the registry it names
# (docker.io/buzz/stack:dev -> buzz/stack:dev). An archive is pushed again only when it is newer
# than its stamp, which lives beside the data, so a registry whose data went is pushed in full.
push() {
  running || die "the registry is not running; run 'hack/registry.sh up'"
  local addr; addr=$(address)
  need_cmd skopeo skopeo
  mkdir -p "$D/pushed"
  local a n path pushed=0
  for a in "$IMAGES"/archives/*.tar; do
    [ -f "$a" ] || continue
    n=$(tar -xOf "$a" index.json | python3 -c 'import json,sys; m=json.load(sys.stdin)["manifests"][0].get("annotations") or {}; print(m.get("io.containerd.image.name") or m.get("org.opencontainers.image.ref.name") or "")')
    [ -n "$n" ] || continue
    case $n in registry.k8s.io/*) continue ;; esac   # the node's own pause image is never pulled
    path=${n#*/}
    local stamp; stamp="$D/pushed/$(basename "$a")"
    [ -f "$stamp" ] && [ ! "$a" -nt "$stamp" ] && [ -d "$DATA/docker/registry/v2/repositories/${path%:*}" ] && continue
    skopeo copy -q --dest-authfile "$D/auth.json" --dest-cert-dir "$D/trust" "oci-archive:$a" "docker://$addr/$path" >/dev/null \
      || die "pushing $n to $addr failed (skopeo copy oci-archive:$a)"
    # the node's copy of an earlier push under this name would shadow the new one for pods that
    # pull IfNotPresent: dropped, so the next pod pulls what was just pushed
    [ -S "$CTRD_SOCK" ] && ctr -a "$CTRD_SOCK" -n k8s.io images rm "$addr/$path" >/dev/null 2>&1
    touch "$stamp"; pushed=$((pushed + 1))
  done
  log "registry $addr: $pushed image(s) pushed"
}

# The node's copies of the registry's images dropped, so the next pod of each pulls it again
# (a cold start, as on a node that never ran the sweep: bench/trial.py, tests of pulls ahead)
forget() {
  [ -S "$CTRD_SOCK" ] || return 0
  local addr; addr=$(address)
  ctr -a "$CTRD_SOCK" -n k8s.io images ls -q 2>/dev/null | grep "^$addr/" | while read -r ref; do
    ctr -a "$CTRD_SOCK" -n k8s.io images rm "$ref" >/dev/null 2>&1 || true
  done
}

case "${1:-up}" in
build) build ;;
up|down|push)
  mkdir -p "$D"
  exec 9>"$D/.lock"; flock 9
  "$1"
  ;;
status)
  if running; then echo "registry: running (distribution v$REGISTRY_VERSION) on https://$(address)"; else echo "registry: stopped"; fi
  ;;
address) address ;;
dockerconfig)
  [ -s "$D/password" ] || die "the registry has no login yet; run 'hack/registry.sh up'"
  dockerconfig "$(address)"
  ;;
hosts-dir) echo "$HOSTS_DIR" ;;
forget) forget ;;
*) die "usage: hack/registry.sh build|up|down|status|address|push|dockerconfig|hosts-dir|forget" ;;
esac
