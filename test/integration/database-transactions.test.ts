// A transaction is isolated from the queries around it, on either database. SQLite's one
// connection once ran a query from outside an open transaction inside it (services/sqlite-one-connection.ts):
// the query saw uncommitted rows, and its own write vanished when the transaction rolled back.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseTarget, type DatabaseTarget } from '../../core/database-target';
import { createDb, type Db } from '../../services/db';
import { newId } from '../../services/ids';
import { runFixture, type FixtureExit } from '../helpers/child-process';
import { testConfig } from '../helpers/control-plane';
import { counterKey, incrementCounter } from '../helpers/sqlite-counter';

let db: Db;
let target: DatabaseTarget;
beforeAll(async () => {
  target = databaseTarget(await testConfig());
  db = await createDb(target);
});
afterAll(async () => db?.$disconnect());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const row = (nodeId: string) => ({ nodeId, provisionState: 'deploying', last: 1 });
const key = (nodeId: string) => ({ nodeId_provisionState: { nodeId, provisionState: 'deploying' } });

describe('a transaction and the queries beside it', () => {
  it("a write from outside an open transaction survives that transaction's rollback, and never reads its rows", async () => {
    const inside = newId('node');
    const outside = newId('node');
    let entered!: () => void;
    const open = new Promise<void>((resolve) => (entered = resolve));
    const rolledBack = db
      .$transaction(async (tx) => {
        await tx.profileRunSeq.create({ data: row(inside) });
        entered();
        await sleep(200);
        throw new Error('the business logic gives up');
      })
      .catch((error: Error) => error.message);

    await open;
    const [seenInside] = await Promise.all([db.profileRunSeq.findUnique({ where: key(inside) }), db.profileRunSeq.create({ data: row(outside) })]);
    expect(seenInside).toBeNull();
    expect(await rolledBack).toBe('the business logic gives up');

    expect(await db.profileRunSeq.findUnique({ where: key(outside) })).toMatchObject({ nodeId: outside });
    expect(await db.profileRunSeq.findUnique({ where: key(inside) })).toBeNull();
  });

  it('many transactions and plain writes at once all land', async () => {
    const ids = Array.from({ length: 40 }, () => newId('node'));
    await Promise.all(
      ids.map((nodeId, i) =>
        i % 2 === 0
          ? db.$transaction(async (tx) => {
              await sleep(5);
              await tx.profileRunSeq.create({ data: row(nodeId) });
            })
          : db.profileRunSeq.create({ data: row(nodeId) }),
      ),
    );
    expect(await db.profileRunSeq.count({ where: { nodeId: { in: ids } } })).toBe(ids.length);
  });

  it('thousands of queries one after another leave the connection pool as it was', async () => {
    // Each query takes a pooled connection: a wrapper added at every hand-out (services/db-adapter.ts
    // once did) nested deeper with each one, until a callback overflowed the stack and the pool
    // released a client twice, which ended the process.
    for (let i = 0; i < 8000; i++) await db.$queryRawUnsafe('SELECT 1');
    expect(await db.profileRunSeq.count({ where: { nodeId: 'none' } })).toBe(0);
  }, 120_000);
});

// The PostgreSQL pass runs without these: its server takes the locks, not the file.
describe.runIf(inject('templateDatabase').startsWith('file:'))('two processes on one SQLite file', () => {
  /** The fixture's process incrementing the counter `count` times, once its connection is open. */
  async function startContender(file: string, nodeId: string, count: number): Promise<{ exited: Promise<FixtureExit> }> {
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const { exited } = runFixture(path.join(import.meta.dirname, '../fixtures/sqlite-contender.ts'), [file, nodeId, String(count)], {
      onOutput: (output) => {
        if (output.includes('ready')) ready();
      },
    });
    await Promise.race([started, exited]);
    return { exited };
  }

  it('runs in write-ahead-log mode', async () => {
    const [mode] = await db.$queryRawUnsafe<Array<{ journal_mode: string }>>('PRAGMA journal_mode');
    expect(mode?.journal_mode).toBe('wal');
  });

  it('read-then-write transactions from both processes at once all land, none lost', async () => {
    if (target.provider !== 'sqlite') throw new Error('runs on SQLite only');
    const nodeId = newId('node');
    await db.profileRunSeq.create({ data: { nodeId, provisionState: 'counter', last: 0 } });
    const perProcess = 300;
    const other = await startContender(target.file, nodeId, perProcess);
    for (let i = 0; i < perProcess; i++) await incrementCounter(db, nodeId);
    const { code, output } = await other.exited;
    expect(output).not.toMatch(/SQLITE_BUSY|database is locked/i);
    expect(code).toBe(0);
    expect((await db.profileRunSeq.findUniqueOrThrow({ where: counterKey(nodeId) })).last).toBe(2 * perProcess);
  }, 120_000);
});
