// sites.delete: refused while live pools or nodes remain; otherwise every join token of
// the site is revoked, its open join requests expire, its boot lease is dropped, and the
// row is removed, or kept as a tombstone when anything ever referenced the site.
import type { Db } from '../db';
import { IronflowError, notFound } from '../../core/errors';
import { appendEvent } from '../events';

export async function deleteSite(db: Db, tenantId: string, siteId: string): Promise<{ deleted: boolean; tombstoned: boolean }> {
  return db.$transaction(async (tx) => {
    // Touch the row first: it takes the row's lock, so a pool, token or join racing with
    // this delete either commits before (and is counted) or fails after (site deleted).
    const locked = await tx.site.updateMany({ where: { id: siteId, ownerTenantId: tenantId, deletedAt: null }, data: { updatedAt: new Date() } });
    const site = await tx.site.findFirst({ where: { id: siteId, ownerTenantId: tenantId } });
    if (!site) throw notFound('site', siteId);
    if (locked.count === 0 || site.deletedAt) return { deleted: false, tombstoned: true };

    const [pools, nodes] = await Promise.all([tx.pool.count({ where: { siteId, deletedAt: null } }), tx.node.count({ where: { siteId, deletedAt: null } })]);
    if (pools > 0 || nodes > 0) {
      throw new IronflowError('INVALID_STATE', `site ${siteId} still has ${pools} live pool(s) and ${nodes} live node(s); delete or move them first`, {
        siteId,
        pools,
        nodes,
      });
    }
    const now = new Date();
    const tokens = await tx.joinToken.updateMany({ where: { siteId, revokedAt: null }, data: { revokedAt: now } });
    const requests = await tx.joinRequest.updateMany({ where: { siteId, status: 'open' }, data: { status: 'expired', decidedAt: now } });
    await tx.bootLease.deleteMany({ where: { siteId } });
    const tombstoned = site.everReferenced;
    if (tombstoned) await tx.site.update({ where: { id: siteId }, data: { deletedAt: now, version: site.version + 1 } });
    else await tx.site.delete({ where: { id: siteId } });
    await appendEvent(tx, {
      tenantId,
      type: 'site.deleted',
      subjectId: siteId,
      data: { tombstoned, joinTokensRevoked: tokens.count, joinRequestsExpired: requests.count },
    });
    return { deleted: true, tombstoned };
  });
}
