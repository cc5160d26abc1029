// A site's boot slots: at most `limit` provision runs of one site PXE-boot their machines and
// run on the ramdisk at a time; the others queue, first come first served. Rows live in the
// database (BootSlot), so every control-plane worker sees one queue and a crash loses no
// place in it. A grant is written here; the run hears of it by a wake-up signal (activities/
// boot-slots.ts) and reads it back, so a lost signal delays a run, never loses its slot.
import { isUniqueViolation, Prisma, type Db, type Tx } from '../db';
import { executeStatement, queryRows } from '../raw-statements';

export interface BootQueuePlace {
  granted: boolean;
  /** Runs queued before this one at the site (0 when granted). */
  ahead: number;
  /** Other runs this call granted a slot: each waits for its wake-up. */
  wake: string[];
}

/** Two grant passes racing on PostgreSQL may pick the same free slot: the unique (siteId, slot) refuses one, which tries again. */
const GRANT_ATTEMPTS = 5;

/**
 * Grants the site's free slots to its oldest queued runs; answers the runs granted. Slots are
 * numbered below the limit and unique per site, so no interleaving of passes grants more.
 */
export async function grantBootSlots(db: Db, siteId: string, limit: number, now = new Date()): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction((tx) => grantPass(tx, siteId, limit, now));
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= GRANT_ATTEMPTS) throw err;
    }
  }
}

// Raw statements (services/raw-statements.ts): each boot enters and leaves the queue, so a fleet
// makes about six grant passes a machine, and Prisma 6.19's client compiled each of their statements afresh.
async function grantPass(tx: Tx, siteId: string, limit: number, now: Date): Promise<string[]> {
  const held = await queryRows<{ slot: number }>(tx, Prisma.sql`SELECT "slot" FROM "BootSlot" WHERE "siteId" = ${siteId} AND "slot" IS NOT NULL`);
  const used = new Set(held.map((row) => row.slot));
  const free: number[] = [];
  for (let slot = 0; slot < limit && free.length < limit - held.length; slot++) if (!used.has(slot)) free.push(slot);
  if (free.length === 0) return [];
  const next = await queryRows<{ workflowId: string }>(
    tx,
    Prisma.sql`SELECT "workflowId" FROM "BootSlot" WHERE "siteId" = ${siteId} AND "slot" IS NULL ORDER BY "queuedAt" ASC, "workflowId" ASC LIMIT ${free.length}`,
  );
  const granted: string[] = [];
  for (const [i, run] of next.entries()) {
    const updated = await executeStatement(
      tx,
      Prisma.sql`UPDATE "BootSlot" SET "slot" = ${free[i]}, "grantedAt" = ${now} WHERE "workflowId" = ${run.workflowId} AND "slot" IS NULL`,
    );
    if (updated === 1) granted.push(run.workflowId);
  }
  return granted;
}

/** Puts a run in its site's queue (once: a retry keeps its place) and grants what is free; answers whether it holds a slot and, if not, how many are ahead. */
export async function enterBootQueue(db: Db, run: { workflowId: string; siteId: string; nodeId: string }, limit: number): Promise<BootQueuePlace> {
  const row = await db.bootSlot.upsert({
    where: { workflowId: run.workflowId },
    create: { workflowId: run.workflowId, siteId: run.siteId, nodeId: run.nodeId },
    update: {},
  });
  if (row.slot !== null) return { granted: true, ahead: 0, wake: [] };
  const granted = await grantBootSlots(db, run.siteId, limit);
  const others = granted.filter((id) => id !== run.workflowId);
  // Another run's pass may have granted this one meanwhile (and woken it: the answer says so first).
  if (granted.includes(run.workflowId) || ((await db.bootSlot.findUnique({ where: { workflowId: run.workflowId } }))?.slot ?? null) !== null) {
    return { granted: true, ahead: 0, wake: others };
  }
  const ahead = await db.bootSlot.count({
    where: {
      siteId: run.siteId,
      slot: null,
      OR: [{ queuedAt: { lt: row.queuedAt } }, { queuedAt: row.queuedAt, workflowId: { lt: row.workflowId } }],
    },
  });
  return { granted: false, ahead, wake: others };
}

/** Takes a run out of its site's queue, holding or not, and grants its slot on; answers the runs granted. */
export async function leaveBootQueue(db: Db, run: { workflowId: string; siteId: string }, limit: number): Promise<string[]> {
  const removed = await db.bootSlot.deleteMany({ where: { workflowId: run.workflowId } });
  if (removed.count === 0) return [];
  return grantBootSlots(db, run.siteId, limit);
}
