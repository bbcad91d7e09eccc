#!/bin/bash
# A throwaway S3-speaking server for tests: moto's standalone server on 127.0.0.1:$BUZZ_S3_PORT.
#   hack/s3.sh up|down|status|env
# moto runs from its own virtualenv under $CACHE: it pulls in botocore, whose python-dateutil pin
# conflicts with the product's dependencies, so it must never be installed into the project's .venv.
# Data lives in the server's memory; $RUN/s3 holds only its pid, port and log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# moto's S3 backend plus the two packages its standalone server needs. Not moto[server]: that
# extra pulls in every AWS service's dependencies (cfn-lint, docker, sympy, ...): 344 MB and ~50 s
# cold against 137 MB for these.
MOTO_SPEC=('moto[s3]==5.1.22' 'flask>=2.2.2,<4' 'flask-cors>=4,<7')
VENV=$CACHE/s3-venv
STAMP=$VENV/.installed-$(printf '%s ' "${MOTO_SPEC[@]}" | sha256sum | cut -c1-16)
D=$RUN/s3
PIDF=$D/server.pid
# Fixed credentials are fine: the server is local, throwaway, and moto does not check them.
ACCESS_KEY=buzz-test-access
SECRET_KEY=buzz-test-secret
REGION=us-east-1
ENDPOINT=http://127.0.0.1:$S3_PORT
START_TIMEOUT=${BUZZ_S3_START_TIMEOUT:-60}

# A pid is ours only while its command line is moto's server: a stale pid file may name a pid
# that was reused by something else, which must never be killed.
server_pid() {
  [ -f "$PIDF" ] || return 1
  local pid; pid=$(cat "$PIDF")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q moto_server || return 1
  echo "$pid"
}
# moto answers an unsigned ListBuckets with 200; any HTTP answer at all means the server is serving.
answers() { curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; }
running() { server_pid >/dev/null && [ "$(cat "$D/port" 2>/dev/null)" = "$S3_PORT" ] && answers; }

ensure_venv() {
  [ -f "$STAMP" ] && return 0
  need_disk "$CACHE" 300 "the S3 test server's virtualenv"
  tool_venv "$VENV" "${PYTHON:-python3}" "$CACHE/s3-venv-pip.log" "${MOTO_SPEC[@]}"
}

stop_pid() {  # stop_pid PID: TERM, then KILL after 10 s; returns once the process is gone
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  die "S3 server pid $pid did not exit after SIGKILL"
}

up() {
  mkdir -p "$D"
  if running; then return 0; fi
  # a server of ours that no longer answers (or serves another port) is replaced, not trusted
  local old
  if old=$(server_pid); then log "replacing unresponsive S3 server pid $old"; stop_pid "$old"; fi
  rm -f "$PIDF"
  reserve_ports "$S3_PORT"
  port_free "$S3_PORT" "the S3 test server"
  ensure_venv
  # setsid: the server outlives this script and must not get the caller's terminal signals.
  # All output goes to the log so a caller that captures our stdout (pytest) is not held open,
  # and fd 9 (the lock) is closed so the server does not hold the lock for its whole life.
  setsid "$VENV/bin/moto_server" -H 127.0.0.1 -p "$S3_PORT" >"$D/server.log" 2>&1 </dev/null 9>&- &
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
      stop_pid "$pid"; rm -f "$PIDF"; tail -5 "$D/server.log" >&2
      die "the S3 server did not answer on $ENDPOINT within ${START_TIMEOUT}s; stopped it; see $D/server.log"
    fi
    sleep 0.1
  done
  trap - INT TERM HUP
  log "S3 server (moto) up on $ENDPOINT"
}

down() {
  local pid
  if pid=$(server_pid); then stop_pid "$pid"; fi
  rm -f "$PIDF" "$D/port"
}

case "${1:-up}" in
up|down)
  mkdir -p "$D"
  # one caller at a time: parallel test workers may all call `up` at once
  exec 9>"$D/.lock"; flock 9
  "$1"
  ;;
status)
  if running; then echo "s3: running (moto) on $ENDPOINT"; else echo "s3: stopped"; fi
  ;;
env)
  printf 'BUZZ_S3_ENDPOINT=%s\nBUZZ_S3_ACCESS_KEY=%s\nBUZZ_S3_SECRET_KEY=%s\nBUZZ_S3_REGION=%s\n' \
    "$ENDPOINT" "$ACCESS_KEY" "$SECRET_KEY" "$REGION"
  ;;
*) die "usage: hack/s3.sh up|down|status|env" ;;
esac
