// The PostgreSQL connection pool (services/db-adapter.ts): it keeps the connections a burst
// opened instead of opening them anew for the next burst, gives them back to the server when its
// client disconnects, and never holds a finished process open. PostgreSQL only: SQLite has one
// connection and no pool.
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseTarget } from '../../core/database-target';
import { createDb, type Db } from '../../services/db';
import { runFixture } from '../helpers/child-process';
import { testConfig } from '../helpers/control-plane';

const isPostgres = !inject('templateDatabase').startsWith('file:');
const fixture = fileURLToPath(new URL('../fixtures/idle-pool-process.ts', import.meta.url));

/** The backend process ids serving `count` queries of `db` at once: one connection each. */
async function backendsOfBurst(db: Db, count: number): Promise<number[]> {
  const rows = await Promise.all(
    Array.from({ length: count }, () => db.$queryRawUnsafe<Array<{ pid: number }>>('SELECT pg_backend_pid() AS pid FROM pg_sleep(0.2)')),
  );
  return rows.map((r) => Number(r[0]?.pid)).sort((a, b) => a - b);
}

/** Which of `pids` the server still has a backend for. */
async function liveBackends(observer: Db, pids: number[]): Promise<number[]> {
  const rows = await observer.$queryRawUnsafe<Array<{ pid: number }>>('SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[])', pids);
  return rows.map((r) => Number(r.pid));
}

describe.runIf(isPostgres)('the PostgreSQL pool', () => {
  let observer: Db;
  beforeAll(async () => {
    observer = await createDb(databaseTarget(await testConfig()));
  });
  afterAll(async () => observer?.$disconnect());

  // pg's default closed a connection idle for 10 s: under steady load the pool hands out the one
  // released last, the others sit idle, and the next burst opened each again (a new backend).
  it('keeps the connections a burst opened past 10 s of idleness, and serves the next burst on them', async () => {
    const db = await createDb(databaseTarget(await testConfig()));
    try {
      const first = await backendsOfBurst(db, 4);
      expect(new Set(first).size).toBe(4);
      await sleep(11_000);
      expect(await backendsOfBurst(db, 4)).toEqual(first);
    } finally {
      await db.$disconnect();
    }
  }, 30_000);

  it('gives its connections back to the server when its client disconnects, not when they time out', async () => {
    const db = await createDb(databaseTarget(await testConfig()));
    const pids = await backendsOfBurst(db, 3);
    expect(await liveBackends(observer, pids)).toHaveLength(3);
    await db.$disconnect();
    // A backend exits as soon as it reads the client's goodbye; give it a moment.
    for (let i = 0; i < 50 && (await liveBackends(observer, pids)).length > 0; i++) await sleep(100);
    expect(await liveBackends(observer, pids)).toEqual([]);
  });

  // The Prisma CLI (`migrate deploy`) never disposes of its adapter: with the pool's timers
  // holding the event loop it would wait out the idle timeout (minutes) after its work.
  it('lets a process that never disconnects exit once its work is done', async () => {
    const { databaseUrl } = await testConfig();
    const { code, output } = await runFixture(fixture, [], { env: { ...process.env, DATABASE_URL: databaseUrl }, killAfterMs: 45_000 }).exited;
    expect(output).toBe('queried\n');
    expect(code).toBe(0);
  }, 60_000);
});
