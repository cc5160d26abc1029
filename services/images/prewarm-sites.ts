// Which sites pre-warm an image ref: their live pools name it in policy.prewarmImages.
// A change to such an image (registered, promoted) changes those sites' desired cacheImages,
// so it is announced as a site.spec.changed event in the transaction of the change.
import type { DbOrTx } from '../db';
import { appendEvent } from '../events';

export interface PrewarmingPool {
  id: string;
  tenantId: string;
  siteId: string;
  prewarmImages: string[];
}

/** A pool policy's prewarmImages, ignoring anything that is not a list of strings. */
export function prewarmRefsOf(policy: unknown): string[] {
  if (!policy || typeof policy !== 'object' || Array.isArray(policy)) return [];
  const refs = (policy as { prewarmImages?: unknown }).prewarmImages;
  return Array.isArray(refs) ? refs.filter((r): r is string => typeof r === 'string') : [];
}

export async function livePrewarmingPools(db: DbOrTx, where: { siteId?: string } = {}): Promise<PrewarmingPool[]> {
  const pools = await db.pool.findMany({
    where: { deletedAt: null, ...(where.siteId ? { siteId: where.siteId } : {}) },
    select: { id: true, tenantId: true, siteId: true, policy: true },
    orderBy: { id: 'asc' },
  });
  return pools
    .map((p) => ({ id: p.id, tenantId: p.tenantId, siteId: p.siteId, prewarmImages: prewarmRefsOf(p.policy) }))
    .filter((p) => p.prewarmImages.length > 0);
}

/**
 * Announces that a site's desired cacheImages changed (pools.update calls this when a pool's
 * prewarmImages change), in the caller's transaction, to the site owner's event log.
 */
export async function announceSiteCacheChange(tx: DbOrTx, siteId: string, data: Record<string, unknown> = {}): Promise<void> {
  const site = await tx.site.findUnique({ where: { id: siteId }, select: { ownerTenantId: true, deletedAt: true } });
  if (!site || site.deletedAt) return;
  await appendEvent(tx, { tenantId: site.ownerTenantId, type: 'site.spec.changed', subjectId: siteId, data: { field: 'cacheImages', ...data } });
}

/** Announces every site whose live pools name `ref`; returns their ids. */
export async function announcePrewarmChange(tx: DbOrTx, ref: string, imageId: string): Promise<string[]> {
  const siteIds = [...new Set((await livePrewarmingPools(tx)).filter((p) => p.prewarmImages.includes(ref)).map((p) => p.siteId))];
  for (const siteId of siteIds) await announceSiteCacheChange(tx, siteId, { ref, imageId });
  return siteIds;
}
