#!/bin/bash
# A throwaway PostgreSQL cluster (Debian's server) on a private port and data dir.
#   hack/postgres.sh up|down|status|dsn
# The DSN (with its generated password) is written to $RUN/postgres/dsn, readable by root only.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
D=$RUN/postgres
as_pg() { runuser -u postgres -- "$@"; }
running() { [ -n "$PGBIN" ] && [ -f "$D/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$D/data" status >/dev/null 2>&1; }
case "${1:-up}" in
up)
  need_root
  [ -n "$PGBIN" ] || die "PostgreSQL server binaries not found; run hack/deps.sh (Debian package postgresql)"
  if running; then exit 0; fi
  reserve_ports "$PG_PORT"
  port_free "$PG_PORT" postgres
  need_disk "$RUN" 200 "PostgreSQL"
  mkdir -p "$D"; chown postgres:postgres "$D"; chmod 700 "$D"
  if [ ! -f "$D/data/PG_VERSION" ]; then
    pw=$(openssl rand -hex 16)
    printf '%s\n' "$pw" > "$D/pwfile"; chown postgres "$D/pwfile"; chmod 600 "$D/pwfile"
    as_pg "$PGBIN/initdb" -D "$D/data" -U buzz --pwfile="$D/pwfile" --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$D/initdb.log" 2>&1 \
      || die "initdb failed; see $D/initdb.log"
    rm -f "$D/pwfile"
    printf 'postgresql://buzz:%s@127.0.0.1:%s/buzz\n' "$pw" "$PG_PORT" > "$D/dsn"; chmod 600 "$D/dsn"
    # pods reach this server on the bridge address, so listen there too once it exists
    cat >> "$D/data/postgresql.conf" <<CONF
listen_addresses = '*'
port = $PG_PORT
unix_socket_directories = '$D'
max_connections = 300
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$D/data/pg_hba.conf"
  fi
  sed -i "s#^postgresql://buzz:\([^@]*\)@127.0.0.1:[0-9]*/#postgresql://buzz:\1@127.0.0.1:$PG_PORT/#" "$D/dsn"
  as_pg "$PGBIN/pg_ctl" -D "$D/data" -l "$D/server.log" -o "-p $PG_PORT" -w -t 60 start >/dev/null \
    || { tail -5 "$D/server.log" >&2; die "PostgreSQL did not start; see $D/server.log"; }
  as_pg "$PGBIN/psql" -h "$D" -p "$PG_PORT" -U buzz -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='buzz'" | grep -q 1 \
    || as_pg "$PGBIN/createdb" -h "$D" -p "$PG_PORT" -U buzz buzz
  log "postgres up on 127.0.0.1:$PG_PORT (DSN in $D/dsn)"
  ;;
down)
  if running; then as_pg "$PGBIN/pg_ctl" -D "$D/data" -m fast -w stop >/dev/null || true; fi
  # the data is throwaway: a fresh cluster next time keeps tests independent of earlier runs
  rm -rf "$D"
  ;;
status)
  if running; then echo "postgres: running on 127.0.0.1:$PG_PORT"; else echo "postgres: stopped"; fi
  ;;
dsn)
  cat "$D/dsn"
  ;;
*) die "usage: hack/postgres.sh up|down|status|dsn" ;;
esac
