#!/usr/bin/env bash
# Starts a throw-away PostgreSQL 15 on 127.0.0.1 for the database tests and prints its
# DATABASE_URL. Installs Debian's postgresql when missing. Usage: scripts/postgres.sh DIR PORT;
# scripts/postgres.sh --stop DIR stops it (fast shutdown).
set -euo pipefail
stopping=false
if [ "${1:-}" = --stop ]; then stopping=true; shift; fi
dir=${1:?usage: scripts/postgres.sh DIR PORT, or scripts/postgres.sh --stop DIR}
port=${2:-55432}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "installing postgresql (apt-get)…" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) >&2 \
    || { echo "could not install postgresql; retry: apt-get update && apt-get install -y postgresql" >&2; exit 1; }
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi
# initdb refuses to run as root: the cluster belongs to the postgres user.
run() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if $stopping; then
  run "$bin/pg_ctl" -D "$dir" -m fast stop >/dev/null
  exit 0
fi
mkdir -p "$dir"
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
if [ ! -f "$dir/PG_VERSION" ]; then
  run "$bin/initdb" -D "$dir" -U ironflow --auth=trust >/dev/null
fi
run "$bin/pg_ctl" -D "$dir" -o "-p $port -k /tmp -c listen_addresses=127.0.0.1" -l "$dir/server.log" -w start >/dev/null
echo "postgres://ironflow@127.0.0.1:$port/postgres"
