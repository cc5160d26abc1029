#!/usr/bin/env bash
# Runs the Prisma CLI with no native engine, in two versions. Prisma 7 generates the clients
# (its query compiler caches query plans); its migrate commands need a native schema engine,
# which nothing here can download, so `migrate …` runs on Prisma 6.19's WebAssembly schema
# engine (the npm alias `prisma-migrate`) behind the same driver adapters
# (prisma/migrate.config.ts). The CLIs only check that the native engines' paths exist.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tools/prisma-placeholders generated
touch .tools/prisma-placeholders/schema-engine .tools/prisma-placeholders/libquery_engine.so.node
export PRISMA_SCHEMA_ENGINE_BINARY="$PWD/.tools/prisma-placeholders/schema-engine"
export PRISMA_QUERY_ENGINE_LIBRARY="$PWD/.tools/prisma-placeholders/libquery_engine.so.node"
export PRISMA_HIDE_UPDATE_MESSAGE=1 CHECKPOINT_DISABLE=1
# The PostgreSQL schema is this one with another provider and client folder.
sed -e 's/provider = "sqlite"/provider = "postgresql"/' \
    -e 's#generated/prisma-sqlite#generated/prisma-postgres#' \
    prisma/schema.prisma > generated/schema.postgres.prisma
if [ "${1:-}" = migrate ]; then
  . scripts/lib/prisma-schema.sh
  with_placeholder_url prisma/schema.prisma > generated/schema.migrate.sqlite.prisma
  with_placeholder_url generated/schema.postgres.prisma > generated/schema.migrate.postgres.prisma
  exec node node_modules/prisma-migrate/build/index.js "$@" --config prisma/migrate.config.ts
fi
exec npx --no-install prisma "$@"
