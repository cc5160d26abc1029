// A node's guarded update in raw SQL (services/metal/node-writes.ts) writes what Prisma's model
// update writes, on either database: the same values of every column type read back by the
// model, the version bumped, updatedAt set, JSON null as SQL NULL; a stale version is CONFLICT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTarget } from '../../core/database-target';
import { IronflowError } from '../../core/errors';
import { createDb, Prisma, type Db } from '../../services/db';
import { newId } from '../../services/ids';
import { updateNodeAtVersion, type NodeColumns } from '../../services/metal/node-writes';
import { testConfig } from '../helpers/control-plane';

let db: Db;
beforeAll(async () => {
  db = await createDb(databaseTarget(await testConfig()));
});
afterAll(async () => db?.$disconnect());

async function readyNode(): Promise<string> {
  const id = newId('node');
  await db.node.create({
    data: {
      id,
      tenantId: 'root',
      siteId: newId('site'),
      role: 'machine',
      provisionState: 'ready',
      lastError: { code: 'X', message: 'old' },
      labels: { a: '1' },
    },
  });
  return id;
}

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

describe('a node guarded update in raw SQL', () => {
  it('writes every column type as the model update writes it, bumps the version and sets updatedAt', async () => {
    const [raw, model] = [await readyNode(), await readyNode()];
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
    const id = await readyNode();
    const read = await db.node.findUniqueOrThrow({ where: { id } });
    await updateNodeAtVersion(db, read, { maintenance: true });
    const error = await updateNodeAtVersion(db, read, { provisionState: 'deploying' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IronflowError);
    expect(error).toMatchObject({ code: 'CONFLICT', details: { path: 'version' } });
    const now = await db.node.findUniqueOrThrow({ where: { id } });
    expect([now.provisionState, now.version, now.maintenance]).toEqual(['ready', 2, true]);
  });

  it('runs inside a transaction and is undone with it', async () => {
    const id = await readyNode();
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
