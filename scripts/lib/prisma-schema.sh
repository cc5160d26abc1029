# Sourced by scripts/prisma.sh and scripts/new-migration.sh.
# Prints a schema with the datasource url Prisma 6.19's migrate commands want, a placeholder
# (the driver adapter connects); Prisma 7 refuses a url there, so prisma/schema.prisma has none.
with_placeholder_url() {
  sed -e '/^  url  *= /d' \
      -e 's#^  provider = "sqlite"$#&\n  url      = "file:./unused-see-driver-adapter.db"#' \
      -e 's#^  provider = "postgresql"$#&\n  url      = "postgresql://unused-see-driver-adapter"#' \
      "$1"
}
