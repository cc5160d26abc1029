// Raw statements sent straight to the driver adapter (services/raw-statements.ts) answer what
// Prisma's own $queryRaw and $executeRaw answer, on either database: the same rows with the
// same types (dates, JSON, booleans, nulls, 64-bit counts), and the same counts of changed rows.
// Inside a transaction they run on the transaction's connection. A node's guarded update written
// raw (services/metal/node-writes.ts) writes every column type as the model update does.
import { clearLogs, getLogs } from '@prisma/debug';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseTarget } from '../../core/database-target';
import { createDb, isUniqueViolation, Prisma, type Db, type Tx } from '../../services/db';
import { newId } from '../../services/ids';
import { appendEvent, listEvents } from '../../services/events';
import { executeStatement, queryRows } from '../../services/raw-statements';
import { testConfig } from '../helpers/control-plane';
import { statementName } from '../../services/postgres-statement-names';
import { updateNodeAtVersion, type NodeColumns } from '../../services/metal/node-writes';
import { findNodeById } from '../../services/metal/node-reads';
import { IronflowError } from '../../core/errors';

let db: Db;
// The suite's database (test/global-setup.ts): PostgreSQL in scripts/test-postgres.sh's pass.
const isPostgres = !inject('templateDatabase').startsWith('file:');
beforeAll(async () => {
  db = await createDb(databaseTarget(await testConfig()));
});
afterAll(async () => db?.$disconnect());

async function nodeWithEveryColumnType(): Promise<string> {
  const id = newId('node');
  await db.node.create({
    data: {
      id,
      tenantId: 'root',
      siteId: newId('site'),
      role: 'machine',
      provisionState: 'ready',
      maintenance: true,
      uefi: false,
      deletedAt: new Date('2026-01-02T03:04:05.678Z'),
      lastError: { code: 'BMC_UNREACHABLE', message: 'no answer', detail: { tries: 3, last: null } },
      macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'],
      labels: { rack: 'r1', 'zone/α': 'ünïcode' },
      hostSpec: { hostname: 'h1', files: [] },
      inventory: { cpus: 64, memoryMiB: 262_144, nested: [{ a: true }, 1.5] },
    },
  });
  return id;
}

describe('raw statements straight to the driver adapter', () => {
  it("leave no statement's values in @prisma/debug's history, nor do Prisma's own (services/prisma-debug-history.ts)", async () => {
    clearLogs();
    // Each statement is the last one run when the history is read: a later one cannot clear it.
    const id = await nodeWithEveryColumnType();
    const forgotten = () => expect(getLogs()).not.toContain(id);
    forgotten();
    await queryRows(db, Prisma.sql`SELECT "id" FROM "Node" WHERE "id" = ${id}`);
    forgotten();
    await executeStatement(db, Prisma.sql`UPDATE "Node" SET "labels" = ${'{}'} WHERE "id" = ${id}`);
    forgotten();
    await db.$transaction(async (tx) => {
      await queryRows(tx, Prisma.sql`SELECT "id" FROM "Node" WHERE "id" = ${id}`);
      forgotten();
      await tx.node.update({ where: { id }, data: { labels: { rack: 'r2' } } });
      forgotten();
    });
  });

  it('read a row as Prisma maps it: dates, JSON, booleans, integers and nulls', async () => {
    const id = await nodeWithEveryColumnType();
    const statement = Prisma.sql`SELECT * FROM "Node" WHERE "id" = ${id}`;
    const direct = await queryRows<Record<string, unknown>>(db, statement);
    const throughPrisma = await db.$queryRaw<Array<Record<string, unknown>>>(statement);
    expect(direct).toEqual(throughPrisma);
    const [row] = direct;
    expect(row?.deletedAt).toEqual(new Date('2026-01-02T03:04:05.678Z'));
    expect(row?.createdAt).toBeInstanceOf(Date);
    expect(row?.maintenance).toBe(true);
    expect(row?.uefi).toBe(false);
    expect(row?.version).toBe(1);
    expect(row?.labels).toEqual({ rack: 'r1', 'zone/α': 'ünïcode' });
    expect(row?.inventory).toEqual({ cpus: 64, memoryMiB: 262_144, nested: [{ a: true }, 1.5] });
    expect(row?.poolId).toBeNull();
    // The model's own read agrees on every column.
    expect(row).toEqual(await db.node.findUnique({ where: { id } }));
  });

  it("read a node by id as the model's findUnique does, in a transaction or not (services/metal/node-reads.ts)", async () => {
    const id = await nodeWithEveryColumnType();
    const model = await db.node.findUnique({ where: { id } });
    expect(model).not.toBeNull();
    expect(await findNodeById(db, id)).toEqual(model);
    expect(await db.$transaction((tx) => findNodeById(tx, id))).toEqual(model);
    expect(await findNodeById(db, newId('node'))).toBeNull();
  });

  it('bind dates, numbers, booleans and nulls as parameters, and count as Prisma counts', async () => {
    const id = await nodeWithEveryColumnType();
    const since = new Date('2026-01-01T00:00:00.000Z');
    const statement = Prisma.sql`
      SELECT COUNT(*) AS "n" FROM "Node"
      WHERE "id" = ${id} AND "deletedAt" > ${since} AND "maintenance" = ${true} AND "version" < ${2} AND "poolId" IS NOT DISTINCT FROM ${null}`;
    const [direct] = await queryRows<{ n: bigint | number }>(db, statement);
    const [throughPrisma] = await db.$queryRaw<Array<{ n: bigint | number }>>(statement);
    expect(direct).toEqual(throughPrisma);
    expect(Number(direct?.n)).toBe(1);
  });

  it('answer how many rows a write changed', async () => {
    const id = await nodeWithEveryColumnType();
    const rename = (value: string) => Prisma.sql`UPDATE "Node" SET "hardwareProfile" = ${value} WHERE "id" = ${id} OR "id" = ${'node_absent'}`;
    expect(await executeStatement(db, rename('direct'))).toBe(1);
    expect(await db.$executeRaw(rename('prisma'))).toBe(1);
    expect(await executeStatement(db, Prisma.sql`UPDATE "Node" SET "hardwareProfile" = 'x' WHERE "id" = ${'node_absent'}`)).toBe(0);
    expect((await db.node.findUnique({ where: { id } }))?.hardwareProfile).toBe('prisma');
  });

  it("run inside a transaction on the transaction's connection: its rows are seen, and undone with it", async () => {
    const id = newId('node');
    const seen = await db
      .$transaction(async (tx) => {
        await executeStatement(tx, Prisma.sql`INSERT INTO "ProfileRunSeq" ("nodeId", "provisionState", "last") VALUES (${id}, 'ready', 1)`);
        const [inside] = await queryRows<{ last: number }>(tx, Prisma.sql`SELECT "last" FROM "ProfileRunSeq" WHERE "nodeId" = ${id}`);
        throw new Error(`rolled back after seeing ${inside?.last}`);
      })
      .catch((error: Error) => error.message);
    expect(seen).toBe('rolled back after seeing 1');
    expect(await queryRows(db, Prisma.sql`SELECT "last" FROM "ProfileRunSeq" WHERE "nodeId" = ${id}`)).toEqual([]);
  });

  it("run inside a transaction on the adapter's own transaction, and are refused once it has ended", async () => {
    const id = newId('node');
    let kept: Tx | undefined;
    await db.$transaction(async (tx) => {
      kept = tx;
      await executeStatement(tx, Prisma.sql`INSERT INTO "ProfileRunSeq" ("nodeId", "provisionState", "last") VALUES (${id}, 'ready', 1)`);
    });
    if (!kept) throw new Error('the transaction never ran');
    // Through the transaction's client Prisma would answer "Transaction already closed"; straight to the adapter's transaction, this guard answers.
    await expect(queryRows(kept, Prisma.sql`SELECT "last" FROM "ProfileRunSeq" WHERE "nodeId" = ${id}`)).rejects.toThrow(/this transaction has ended/);
    await expect(executeStatement(kept, Prisma.sql`DELETE FROM "ProfileRunSeq" WHERE "nodeId" = ${id}`)).rejects.toThrow(/this transaction has ended/);
    expect(await queryRows(db, Prisma.sql`SELECT "last" FROM "ProfileRunSeq" WHERE "nodeId" = ${id}`)).toEqual([{ last: 1 }]);
  });

  it("fail with the database's own message", async () => {
    await expect(queryRows(db, Prisma.sql`SELECT "noSuchColumn" FROM "Node"`)).rejects.toThrow(/^the database refused the statement: \w+ .*noSuchColumn/);
  });

  it("fail without quoting the failing row's values (PostgreSQL's detail)", async () => {
    const table = Prisma.raw(`"RawStatementsCheck_${process.pid}_${Date.now()}"`);
    await db.$executeRaw`CREATE TABLE ${table} ("v" TEXT CHECK (length("v") < 3))`;
    try {
      const error = await executeStatement(db, Prisma.sql`INSERT INTO ${table} ("v") VALUES (${'row-secret-value'})`).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/check/i);
      expect((error as Error).message).not.toContain('row-secret-value');
      expect((error as Error).cause).toBeUndefined();
    } finally {
      await db.$executeRaw`DROP TABLE ${table}`;
    }
  });

  it('fail a duplicate key as a unique violation, in a transaction or not, as a model create does', async () => {
    const id = newId('event');
    const insert = Prisma.sql`INSERT INTO "Event" ("id", "tenantId", "type", "data", "createdAt") VALUES (${id}, ${'root'}, ${'test.dup'}, ${'{}'}, ${new Date()})`;
    await executeStatement(db, insert);
    const outside = await executeStatement(db, insert).catch((e: unknown) => e);
    const inside = await db.$transaction((tx) => executeStatement(tx, insert)).catch((e: unknown) => e);
    const model = await db.event.create({ data: { id, tenantId: 'root', type: 'test.dup', data: {} } }).catch((e: unknown) => e);
    expect([outside, inside, model].map(isUniqueViolation)).toEqual([true, true, true]);
    expect(isUniqueViolation(await queryRows(db, Prisma.sql`SELECT "noSuchColumn" FROM "Event"`).catch((e: unknown) => e))).toBe(false);
  });

  it('append an event raw, in a transaction or not, that the model reads back whole and finds by date', async () => {
    const tenantId = newId('tenant');
    const before = new Date(Date.now() - 1_000);
    const data = { nested: { list: [1, 'two', null, { deep: true }] }, text: 'ünïcode "quoted" \\ back' };
    await appendEvent(db, { tenantId, type: 'test.raw', subjectId: 'node_a', data });
    await db.$transaction((tx) => appendEvent(tx, { tenantId, type: 'test.raw.tx', data: { n: 2 } }));
    const { events } = await listEvents(db, { tenantId, limit: 10 });
    expect(events.map((e) => [e.type, e.subjectId, e.data])).toEqual([
      ['test.raw', 'node_a', data],
      ['test.raw.tx', null, { n: 2 }],
    ]);
    const since = await db.event.findMany({ where: { tenantId, createdAt: { gte: before, lte: new Date() } } });
    expect(since).toHaveLength(2);
  });

  it('still run after the client disconnected: Prisma opens a connection again, and they run on it', async () => {
    const own = await createDb(databaseTarget(await testConfig()));
    try {
      await own.$disconnect();
      const one = Prisma.sql`SELECT COUNT(*) AS "n" FROM "Node" WHERE "id" = ${'node_absent'}`;
      expect(await queryRows<{ n: unknown }>(own, one)).toHaveLength(1);
      expect(await queryRows<{ n: unknown }>(own, one)).toHaveLength(1);
    } finally {
      await own.$disconnect();
    }
  });

  // PostgreSQL only (the SQLite pass keeps its statements in services/sqlite-statement-cache.ts,
  // tested in test/unit/sqlite-statement-cache.test.ts).
  it.runIf(isPostgres)("are prepared once per connection on PostgreSQL, under their name, and answer with each run's arguments", async () => {
    const next = (n: number) => Prisma.sql`SELECT CAST(${n} AS integer) + 1 AS "next"`;
    // A client of its own, its statements one after another: its pool holds one connection, whose prepared statements pg_prepared_statements lists.
    const own = await createDb(databaseTarget(await testConfig()));
    try {
      expect(await queryRows(own, next(1))).toEqual([{ next: 2 }]);
      expect(await queryRows(own, next(41))).toEqual([{ next: 42 }]);
      const prepared = await queryRows<{ name: string }>(own, Prisma.sql`SELECT "name" FROM pg_prepared_statements WHERE "statement" = ${next(1).text}`);
      expect(prepared).toEqual([{ name: statementName(next(1).text) }]);
      expect(prepared[0]?.name).toMatch(/^ironflow_[0-9a-f]{20}$/);
    } finally {
      await own.$disconnect();
    }
  });
});

const columns: NodeColumns = {
  provisionState: 'deploying',
  maintenance: true,
  maintenanceReason: 'rack 7 "recabling" ünïcode',
  uefi: false,
  workflowSeq: 3,
  deletedAt: new Date('2026-01-02T03:04:05.678Z'),
  deployProfile: { id: 'ubuntu', version: 2 },
  macs: ['52:54:00:00:00:01'],
  inventory: { cpus: 64, nested: [{ a: true }, 1.5, null, 'text'] },
  labels: { 'zone/α': 'ü' },
  lastError: Prisma.DbNull,
  hostSpec: null,
  failedFrom: null,
};

// A node's guarded update (services/metal/node-writes.ts) writes what Prisma's model update writes.
describe('a node guarded update in raw SQL', () => {
  it('writes every column type as the model update writes it, bumps the version and sets updatedAt', async () => {
    const [raw, model] = [await nodeWithEveryColumnType(), await nodeWithEveryColumnType()];
    const before = await db.node.findUniqueOrThrow({ where: { id: raw } });
    const written = await updateNodeAtVersion(db, before, columns);
    // The same values through the model: JSON columns take Prisma.DbNull for SQL NULL there.
    await db.node.update({ where: { id: model }, data: { ...(columns as object), lastError: Prisma.DbNull, hostSpec: Prisma.DbNull, version: 2 } });
    const rawRow = await db.node.findUniqueOrThrow({ where: { id: raw } });
    const modelRow = await db.node.findUniqueOrThrow({ where: { id: model } });
    const comparable = (row: Record<string, unknown>) => ({ ...row, id: undefined, createdAt: undefined, updatedAt: undefined, siteId: undefined });
    expect(comparable(rawRow as unknown as Record<string, unknown>)).toEqual(comparable(modelRow as unknown as Record<string, unknown>));
    expect(written).toEqual(rawRow);
    expect(rawRow.version).toBe(2);
    expect(rawRow.lastError).toBeNull();
    expect(rawRow.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime() - 1);
    expect(rawRow.inventory).toEqual({ cpus: 64, nested: [{ a: true }, 1.5, null, 'text'] });
  });

  it('refuses a node changed since it was read, as CONFLICT on its version, and changes nothing', async () => {
    const id = await nodeWithEveryColumnType();
    const read = await db.node.findUniqueOrThrow({ where: { id } });
    await updateNodeAtVersion(db, read, { maintenance: true });
    const error = await updateNodeAtVersion(db, read, { provisionState: 'deploying' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IronflowError);
    expect(error).toMatchObject({ code: 'CONFLICT', details: { path: 'version' } });
    const now = await db.node.findUniqueOrThrow({ where: { id } });
    expect([now.provisionState, now.version, now.maintenance]).toEqual(['ready', 2, true]);
  });

  it('runs inside a transaction and is undone with it', async () => {
    const id = await nodeWithEveryColumnType();
    const read = await db.node.findUniqueOrThrow({ where: { id } });
    const seen = await db
      .$transaction(async (tx) => {
        const inside = await updateNodeAtVersion(tx, read, { provisionState: 'deploying' });
        throw new Error(`rolled back after writing ${inside.provisionState}`);
      })
      .catch((e: Error) => e.message);
    expect(seen).toBe('rolled back after writing deploying');
    expect((await db.node.findUniqueOrThrow({ where: { id } })).provisionState).toBe('ready');
  });
});
