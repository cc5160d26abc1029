// Prisma 7 CLI configuration: it generates the clients (scripts/prisma.sh). Migrations run on
// Prisma 6.19's WebAssembly schema engine instead (prisma/migrate.config.ts), so no native
// engine is ever downloaded (see docs/architecture.md).
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { loadConfig } from './services/config';
import { databaseTarget } from './core/database-target';

const target = databaseTarget(loadConfig());

export default defineConfig({
  schema: target.provider === 'postgresql' ? path.join('generated', 'schema.postgres.prisma') : path.join('prisma', 'schema.prisma'),
});
