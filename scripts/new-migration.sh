#!/usr/bin/env bash
# Writes a migration for both databases from the change to prisma/schema.prisma since the
# last migration (`prisma migrate dev` needs a native engine; `migrate diff` does not).
# Usage: scripts/new-migration.sh <name>
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/new-migration.sh <name>}
stamp=$(date -u +%Y%m%d%H%M%S)
snapshot=prisma/migrations/schema.snapshot.prisma
. scripts/lib/prisma-schema.sh
./scripts/prisma.sh migrate --help >/dev/null   # refreshes generated/schema.migrate.*.prisma
for provider in sqlite postgresql; do
  if [ "$provider" = sqlite ]; then to=generated/schema.migrate.sqlite.prisma; else to=generated/schema.migrate.postgres.prisma; fi
  dir=prisma/migrations/$provider/${stamp}_$name
  mkdir -p "$dir"
  if [ -f "$snapshot" ]; then
    from_file=$(mktemp --suffix=.prisma)
    sed -e "s/provider = \"sqlite\"/provider = \"$provider\"/" "$snapshot" | with_placeholder_url /dev/stdin > "$from_file"
    from=(--from-schema-datamodel "$from_file")
  else
    from=(--from-empty)
  fi
  ./scripts/prisma.sh migrate diff "${from[@]}" --to-schema-datamodel "$to" --script > "$dir/migration.sql"
  printf 'provider = "%s"\n' "$provider" > "prisma/migrations/$provider/migration_lock.toml"
  echo "wrote $dir/migration.sql"
done
cp prisma/schema.prisma "$snapshot"
