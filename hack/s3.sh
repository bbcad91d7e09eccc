#!/bin/bash
# The S3 server the tests and `make demo` use: versitygw (github.com/versity/versitygw), built once
# from the Go module proxy, serving its posix backend on 127.0.0.1:$BUZZ_S3_PORT.
#   hack/s3.sh build|up|down|status|env|reference-venv
# It checks every request's SigV4 signature against its one root account, as a real S3 does (the
# moto server it replaces checked none), and keeps objects on disk under $RUN/s3/data, so a
# server stopped and started again still has what it stored (docs/local-cluster.md#s3-server).
# A bucket is a directory there; objects' metadata lives in user xattrs, which $RUN's filesystem
# must support (ext4, xfs, tmpfs do).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
VERSITYGW_VERSION=${BUZZ_VERSITYGW_VERSION:-1.8.0}
VG=$CACHE/versitygw
VG_BIN=$VG/v$VERSITYGW_VERSION/versitygw
D=$RUN/s3
DATA=$D/data
PIDF=$D/server.pid
# Fixed credentials are fine: the server is local and throwaway. They are checked: a request
# signed with any other secret is refused 403 SignatureDoesNotMatch.
ACCESS_KEY=buzz-test-access
SECRET_KEY=buzz-test-secret
REGION=us-east-1
ENDPOINT=http://127.0.0.1:$S3_PORT
START_TIMEOUT=${BUZZ_S3_START_TIMEOUT:-60}
# botocore, AWS's own SigV4 signer, which the project's stdlib signer is checked against
# (tests/integration/storage/test_sigv4_against_botocore.py); its pins must stay out of .venv.
REFERENCE_SPEC=('botocore==1.44.18')
REFERENCE_VENV=$CACHE/sigv4-reference-venv

build() {
  [ -x "$VG_BIN" ] && return 0
  log "building versitygw v$VERSITYGW_VERSION from the Go module proxy (cold: about 3 minutes on 2 cores)"
  go_tool_build versitygw github.com/versity/versitygw "$VERSITYGW_VERSION" github.com/versity/versitygw/cmd/versitygw \
    "$VG_BIN" "$VG" 1500
}

# A pid is ours only while its command line is versitygw serving our data: a stale pid file may
# name a pid that was reused by something else, which must never be killed.
server_pid() {
  [ -f "$PIDF" ] || return 1
  local pid args; pid=$(cat "$PIDF")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  args=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  [[ $args == *versitygw*" posix $DATA"* ]] || return 1
  echo "$pid"
}
# An unsigned request is answered 403 AccessDenied: any HTTP answer at all means it is serving.
answers() { curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; }
running() { server_pid >/dev/null && [ "$(cat "$D/port" 2>/dev/null)" = "$S3_PORT" ] && answers; }

up() {
  mkdir -p "$D"
  if running; then return 0; fi
  # a server of ours that no longer answers (or serves another port) is replaced, not trusted
  local old
  if old=$(server_pid); then log "replacing unresponsive S3 server pid $old"; stop_pid "$old" "S3 server"; fi
  rm -f "$PIDF"
  reserve_ports "$S3_PORT"
  port_free "$S3_PORT" "the S3 test server"
  build
  mkdir -p "$DATA"
  # setsid: the server outlives this script and must not get the caller's terminal signals.
  # All output goes to the log so a caller that captures our stdout (pytest) is not held open,
  # and fd 9 (the lock) is closed so the server does not hold the lock for its whole life.
  # The keys go by environment, not argv: /proc/<pid>/cmdline is readable by every user.
  ROOT_ACCESS_KEY_ID=$ACCESS_KEY ROOT_SECRET_ACCESS_KEY=$SECRET_KEY VGW_REGION=$REGION \
    setsid "$VG_BIN" --port "127.0.0.1:$S3_PORT" posix "$DATA" >"$D/server.log" 2>&1 </dev/null 9>&- &
  local pid=$!
  echo "$pid" >"$PIDF"; echo "$S3_PORT" >"$D/port"
  # interrupted while waiting (Ctrl-C, a caller's timeout): take the half-started server down too
  trap 'kill -KILL "$pid" 2>/dev/null; rm -f "$PIDF"; exit 130' INT TERM HUP
  local deadline=$((SECONDS + START_TIMEOUT))
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDF"; tail -5 "$D/server.log" >&2
      die "the S3 server exited during start; see $D/server.log"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      stop_pid "$pid" "S3 server"; rm -f "$PIDF"; tail -5 "$D/server.log" >&2
      die "the S3 server did not answer on $ENDPOINT within ${START_TIMEOUT}s; stopped it; see $D/server.log"
    fi
    sleep 0.1
  done
  trap - INT TERM HUP
  log "S3 server (versitygw v$VERSITYGW_VERSION) up on $ENDPOINT, data in $DATA"
}

# the server stops; its data stays for the next `up` (a restart loses nothing), as Postgres's does
down() {
  local pid
  if pid=$(server_pid); then stop_pid "$pid" "S3 server"; fi
  rm -f "$PIDF" "$D/port"
}

case "${1:-up}" in
build) build ;;
up|down)
  mkdir -p "$D"
  # one caller at a time: parallel test workers may all call `up` at once
  exec 9>"$D/.lock"; flock 9
  "$1"
  ;;
status)
  if running; then echo "s3: running (versitygw) on $ENDPOINT"; else echo "s3: stopped"; fi
  ;;
env)
  printf 'BUZZ_S3_ENDPOINT=%s\nBUZZ_S3_ACCESS_KEY=%s\nBUZZ_S3_SECRET_KEY=%s\nBUZZ_S3_REGION=%s\n' \
    "$ENDPOINT" "$ACCESS_KEY" "$SECRET_KEY" "$REGION"
  ;;
reference-venv)
  tool_venv "$REFERENCE_VENV" "${PYTHON:-python3}" "$CACHE/sigv4-reference-pip.log" "${REFERENCE_SPEC[@]}" >&2
  echo "$REFERENCE_VENV/bin/python"
  ;;
*) die "usage: hack/s3.sh build|up|down|status|env|reference-venv" ;;
esac
