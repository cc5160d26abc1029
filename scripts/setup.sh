#!/usr/bin/env bash
# Installs what a fresh machine lacks, skipping what is already there:
# npm packages, the Temporal CLI built from the Go module proxy into .tools/bin (with a tctl
# compatibility command beside it), and the Prisma clients. Fails loudly, with the command to
# retry; never half-installs.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'setup: %s\n' "$*" >&2; }
fail() { say "FAILED: $1"; say "retry with: $2"; exit 1; }

node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || fail "Node.js 20 or newer is needed (found $(node --version))" "install Node.js 20+"

# 1. npm packages (package-lock.json pins them).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages (npm ci)…"
  npm ci --no-audit --no-fund >&2 || fail "npm ci" "npm ci"
fi
[ -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ] \
  || fail "better-sqlite3 did not build its native module (install scripts blocked?)" "npm rebuild better-sqlite3"

# 2. Temporal CLI dev server from the Go module proxy, and the tctl compatibility command.
mkdir -p .tools/bin
TEMPORAL_CLI_VERSION=v1.5.1   # v1.6+ has a replace directive that go install refuses
if [ ! -x .tools/bin/temporal ] || ! grep -qx "$TEMPORAL_CLI_VERSION" .tools/bin/.temporal-version 2>/dev/null; then
  command -v go >/dev/null || fail "Go is needed to build the Temporal CLI" "install Go 1.22+, then npm run setup"
  say "building the Temporal CLI $TEMPORAL_CLI_VERSION from the Go module proxy (a few minutes, once)…"
  GOBIN="$PWD/.tools/bin" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2 \
    || fail "go install of the Temporal CLI" "GOBIN=$PWD/.tools/bin go install github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  echo "$TEMPORAL_CLI_VERSION" > .tools/bin/.temporal-version
fi
# The Go module proxy refuses every tctl version; runbooks written for tctl run through
# `temporal` instead (scripts/tctl-compat.mjs translates tctl's workflow commands).
TCTL_COMPAT=../../scripts/tctl-compat.mjs
if [ "$(readlink .tools/bin/tctl 2>/dev/null)" != "$TCTL_COMPAT" ]; then
  say "installing the tctl compatibility command…"
  rm -f .tools/bin/tctl .tools/bin/.tctl-unavailable
  ln -s "$TCTL_COMPAT" .tools/bin/tctl || fail "linking .tools/bin/tctl" "ln -sfn $TCTL_COMPAT .tools/bin/tctl"
fi

# 3. Prisma clients for SQLite and PostgreSQL (no engine download).
if [ ! -f generated/prisma-sqlite/client.ts ] || [ prisma/schema.prisma -nt generated/prisma-sqlite/client.ts ] \
   || [ ! -f generated/prisma-postgres/client.ts ]; then
  say "generating the Prisma clients…"
  ./scripts/prisma.sh generate >/dev/null || fail "prisma generate (SQLite)" "npm run prisma -- generate"
  ./scripts/prisma.sh generate --schema generated/schema.postgres.prisma >/dev/null \
    || fail "prisma generate (PostgreSQL)" "npm run prisma -- generate --schema generated/schema.postgres.prisma"
fi
say "ready."
