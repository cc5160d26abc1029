// Finding a tenant's site, and referencing it from a pool, token or node. Another
// tenant's site is NOT_FOUND; a deleted (tombstoned) site is INVALID_STATE.
import type { DbOrTx } from '../../services/db';
import { IronflowError, notFound } from '../errors';

/** The tenant's live site. */
export async function findOwnedSite(db: DbOrTx, tenantId: string, siteId: string) {
  const site = await db.site.findFirst({ where: { id: siteId, ownerTenantId: tenantId } });
  if (!site) throw notFound('site', siteId);
  if (site.deletedAt) throw new IronflowError('INVALID_STATE', `site ${siteId} was deleted`, { siteId });
  return site;
}

/**
 * Marks the site as referenced (so a delete tombstones it) with a guarded update, which
 * also takes the row's lock: a concurrent delete either sees the new reference or makes
 * this fail, never neither.
 */
export async function referenceLiveSite(tx: DbOrTx, tenantId: string, siteId: string): Promise<void> {
  const marked = await tx.site.updateMany({ where: { id: siteId, ownerTenantId: tenantId, deletedAt: null }, data: { everReferenced: true } });
  if (marked.count === 1) return;
  await findOwnedSite(tx, tenantId, siteId); // throws NOT_FOUND or INVALID_STATE
  throw new IronflowError('INVALID_STATE', `site ${siteId} changed while being referenced; retry`, { siteId });
}
