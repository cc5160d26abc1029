#!/usr/bin/env bash
# Runs the Prisma CLI with no native engine: the schema engine is WebAssembly behind a
# driver adapter (prisma.config.ts), and the CLI only checks these paths exist.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tools/prisma-placeholders
touch .tools/prisma-placeholders/schema-engine .tools/prisma-placeholders/libquery_engine.so.node
export PRISMA_SCHEMA_ENGINE_BINARY="$PWD/.tools/prisma-placeholders/schema-engine"
export PRISMA_QUERY_ENGINE_LIBRARY="$PWD/.tools/prisma-placeholders/libquery_engine.so.node"
export PRISMA_HIDE_UPDATE_MESSAGE=1 CHECKPOINT_DISABLE=1
# The PostgreSQL schema is this one with another provider and client folder.
mkdir -p generated
sed -e 's/provider = "sqlite"/provider = "postgresql"/' \
    -e 's#url      = "file:./unused-see-driver-adapter.db"#url      = "postgresql://unused-see-driver-adapter"#' \
    -e 's#generated/prisma-sqlite#generated/prisma-postgres#' \
    prisma/schema.prisma > generated/schema.postgres.prisma
exec npx --no-install prisma "$@"
