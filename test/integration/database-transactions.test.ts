// A transaction is isolated from the queries around it, on either database. SQLite's one
// connection once ran a query from outside an open transaction inside it (services/sqlite-one-connection.ts):
// the query saw uncommitted rows, and its own write vanished when the transaction rolled back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTarget } from '../../core/database-target';
import { createDb, type Db } from '../../services/db';
import { newId } from '../../services/ids';
import { testConfig } from '../helpers/control-plane';

let db: Db;
beforeAll(async () => {
  db = await createDb(databaseTarget(await testConfig()));
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
