// Applies the Prisma migrations of the configured database (`prisma migrate deploy` on
// the WebAssembly schema engine; no native engine).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../services/config';

const run = promisify(execFile);

export async function migrateDatabase(env: { databaseUrl: string; dataDir: string }): Promise<void> {
  try {
    await run('bash', [path.join(repoRoot, 'scripts', 'prisma.sh'), 'migrate', 'deploy'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: env.databaseUrl, IRONFLOW_DATA_DIR: env.dataDir },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`database migration failed (retry: npm run prisma -- migrate deploy):\n${stderr || stdout || String(err)}`);
  }
}
