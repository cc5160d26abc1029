// Prisma CLI configuration: migrations run on the WebAssembly schema engine through a
// driver adapter, so no native engine is ever downloaded (see docs/architecture.md).
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { loadConfig } from './services/config';
import { databaseTarget } from './core/database-target';
import { createAdapter } from './services/db-adapter';

const target = databaseTarget(loadConfig());

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: target.provider === 'postgresql' ? path.join('generated', 'schema.postgres.prisma') : path.join('prisma', 'schema.prisma'),
  migrations: { path: path.join('prisma', 'migrations', target.provider) },
  adapter: async () => createAdapter(target),
});
