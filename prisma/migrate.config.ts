// Prisma 6.19 CLI configuration, for `migrate …` only (scripts/prisma.sh): migrations run on its
// WebAssembly schema engine through a driver adapter, where Prisma 7's migrate needs a native
// engine that nothing here can download (see docs/architecture.md).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'prisma-migrate/config';
import { loadConfig } from '../services/config';
import { databaseTarget } from '../core/database-target';
import { createAdapter } from '../services/db-adapter';

const target = databaseTarget(loadConfig());
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join(repoRoot, 'generated', `schema.migrate.${target.provider === 'postgresql' ? 'postgres' : 'sqlite'}.prisma`),
  migrations: { path: path.join(repoRoot, 'prisma', 'migrations', target.provider) },
  adapter: async () => createAdapter(target),
});
