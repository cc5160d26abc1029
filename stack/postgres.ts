// A PostgreSQL server of the stack's own (scripts/postgres.sh: Debian's postgresql, trust
// auth on 127.0.0.1), and databases on it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { repoRoot } from '../services/config';

const run = promisify(execFile);
const script = path.join(repoRoot, 'scripts', 'postgres.sh');

export interface PostgresServer {
  /** postgres://ironflow@127.0.0.1:PORT/postgres */
  url: string;
  /** The URL of database `name` on this server. */
  database(name: string): string;
  /** The postmaster's process id (postmaster.pid's first line): every other process of the server is its child. */
  postmasterPid(): number;
  stop(): Promise<void>;
}

/**
 * Starts (initialising on first use) the server whose data lives in `dataDir`. When run as
 * root the server runs as the postgres user, so every parent of `dataDir` must let others
 * through (mode o+x).
 */
export async function startPostgres(dataDir: string, port: number): Promise<PostgresServer> {
  const { stdout } = await run('bash', [script, dataDir, String(port)]).catch((err: Error & { stderr?: string }) => {
    throw new Error(`PostgreSQL did not start in ${dataDir} on port ${port}: ${err.stderr ?? err.message} (its log: ${path.join(dataDir, 'server.log')})`);
  });
  const url = stdout.trim();
  return {
    url,
    database(name) {
      const target = new URL(url);
      target.pathname = `/${name}`;
      return target.toString();
    },
    postmasterPid() {
      return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    },
    async stop() {
      await run('bash', [script, '--stop', dataDir]);
    },
  };
}

/** Whether database `name` is on the server at `url`. */
export async function databaseExists(url: string, name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return (await admin.query({ text: 'SELECT 1 FROM pg_database WHERE datname = $1', values: [name] })).rowCount === 1;
  } finally {
    await admin.end();
  }
}

/** Creates database `name` on the server at `url` unless it exists. */
export async function ensureDatabase(url: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name ${name} is not a lower-case SQL identifier`);
  if (await databaseExists(url, name)) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query({ text: `CREATE DATABASE ${name}` });
  } finally {
    await admin.end();
  }
}
