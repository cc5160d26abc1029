// Slots whose run ended without giving them back (a terminated or timed-out workflow runs no
// cleanup): while runs queue at the site, the boot-lease tick asks Temporal whether each
// holder still runs, at most once per RECLAIM_AFTER_MS, frees the slots of those that do not,
// and grants whatever is free (a raised limit frees slots no run gives back).
import type { Db } from '../db';
import { grantBootSlots } from './queue';

/** A holder is asked about this long after its grant, and again this long after each answer. */
export const RECLAIM_AFTER_MS = 30_000;
/** Holders asked per tick: a site's slots are checked over a few ticks, not in one burst. */
const CHECKS_PER_TICK = 10;

export interface Reclaimed {
  /** Runs whose slots were freed: their workflows no longer run. */
  reclaimed: string[];
  /** Queued runs granted the free slots. */
  granted: string[];
}

export async function reclaimBootSlots(
  db: Db,
  siteId: string,
  limit: number,
  isRunning: (workflowId: string) => Promise<boolean>,
  now = new Date(),
): Promise<Reclaimed> {
  const queued = await db.bootSlot.count({ where: { siteId, slot: null } });
  if (queued === 0) return { reclaimed: [], granted: [] };
  const stale = new Date(now.getTime() - RECLAIM_AFTER_MS);
  const holders = await db.bootSlot.findMany({
    where: { siteId, slot: { not: null }, grantedAt: { lt: stale }, OR: [{ checkedAt: null }, { checkedAt: { lt: stale } }] },
    orderBy: { grantedAt: 'asc' },
    take: CHECKS_PER_TICK,
  });
  // Asked all at once: the boot lease's next renewal waits for this tick to end.
  const running = await Promise.all(holders.map((holder) => isRunning(holder.workflowId)));
  const reclaimed: string[] = [];
  for (const [i, holder] of holders.entries()) {
    if (running[i]) {
      await db.bootSlot.updateMany({ where: { workflowId: holder.workflowId }, data: { checkedAt: now } });
    } else {
      // Guarded by the slot read: a run that left and queued again meanwhile keeps its new place.
      const removed = await db.bootSlot.deleteMany({ where: { workflowId: holder.workflowId, slot: holder.slot } });
      if (removed.count === 1) reclaimed.push(holder.workflowId);
    }
  }
  // Also grants what a raised limit freed: no run gives a slot back for that.
  return { reclaimed, granted: await grantBootSlots(db, siteId, limit, now) };
}
