#!/usr/bin/env bash
# The test suite again, on PostgreSQL: starts a throw-away server (scripts/postgres.sh),
# points the tests' template database at it, runs vitest, stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-deps.sh
dir=$(mktemp -d /tmp/ironflow-pg-XXXXXX)
chmod 755 "$dir"   # the postgres user must reach its data dir
port=${IRONFLOW_TEST_PG_PORT:-55433}
url=$(bash scripts/postgres.sh "$dir/data" "$port")
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
stop() { runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap stop EXIT
echo "test-postgres: PostgreSQL at $url" >&2
IRONFLOW_TEST_DATABASE_URL="$url" npx vitest run "$@"
