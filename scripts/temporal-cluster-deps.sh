#!/usr/bin/env bash
# The cluster profile's Temporal (npm run start:cluster, test/e2e/cluster-lifecycle.test.ts):
# the real Temporal server and its SQL schema tool, built from the Go module proxy at the
# release the dev server embeds, and the server's PostgreSQL schema files copied out of the Go
# module cache, all into .tools/temporal-cluster/ (git-ignored):
#   bin/server, bin/sql          go install go.temporal.io/server/cmd/{server,tools/sql}@VERSION
#   schema/postgresql/v12/…      the module's schema/postgresql/v12 (temporal, visibility)
# Idempotent (skips a build of the same version). A build takes minutes once: see
# docs/operations.md for the times measured. Fails with the command to retry.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'temporal-cluster-deps: %s\n' "$*" >&2; }
fail() { say "FAILED: $1"; say "retry with: $2"; exit 1; }

TEMPORAL_SERVER_VERSION=v1.29.1 # the server the Temporal CLI v1.5.1 dev server embeds
dir=.tools/temporal-cluster
if [ -x "$dir/bin/server" ] && [ -x "$dir/bin/sql" ] && [ -f "$dir/schema/postgresql/v12/temporal/schema.sql" ] \
   && grep -qx "$TEMPORAL_SERVER_VERSION" "$dir/.version" 2>/dev/null; then
  say "Temporal server $TEMPORAL_SERVER_VERSION present"
  exit 0
fi
command -v go >/dev/null || fail "Go is needed to build the Temporal server" "install Go 1.23+, then bash scripts/temporal-cluster-deps.sh"
rm -rf "$dir"
mkdir -p "$dir/bin"
say "building the Temporal server and its SQL tool $TEMPORAL_SERVER_VERSION from the Go module proxy (minutes, once)…"
started=$(date +%s)
GOBIN="$PWD/$dir/bin" GOFLAGS=-mod=mod go install \
  "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" >&2 \
  || fail "go install of the Temporal server" "bash scripts/temporal-cluster-deps.sh"
module=$(go mod download -json "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).Dir))') \
  || fail "locating go.temporal.io/server@$TEMPORAL_SERVER_VERSION in the Go module cache" "bash scripts/temporal-cluster-deps.sh"
mkdir -p "$dir/schema/postgresql"
cp -R "$module/schema/postgresql/v12" "$dir/schema/postgresql/"
chmod -R u+w "$dir/schema" # the module cache is read-only; a later rebuild removes this copy
echo "$TEMPORAL_SERVER_VERSION" >"$dir/.version"
say "built in $(($(date +%s) - started)) s"
