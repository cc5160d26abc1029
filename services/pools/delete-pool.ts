// pools.delete: refused while live nodes remain in the pool; the row is kept as a
// tombstone (nodes and tokens may still name it in history).
import type { Db } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { findOwnedPool } from '../../core/pools/pool-lookup';

export async function deletePool(db: Db, tenantId: string, poolId: string): Promise<{ deleted: boolean }> {
  return db.$transaction(async (tx) => {
    const pool = await findOwnedPool(tx, tenantId, poolId);
    const nodes = await tx.node.count({ where: { poolId, deletedAt: null } });
    if (nodes > 0) throw new IronflowError('INVALID_STATE', `pool ${poolId} still has ${nodes} live node(s); retire them first`, { poolId, nodes });
    const now = new Date();
    await tx.pool.updateMany({ where: { id: poolId, deletedAt: null }, data: { deletedAt: now, version: pool.version + 1 } });
    await tx.joinToken.updateMany({ where: { poolId, revokedAt: null }, data: { revokedAt: now } });
    await appendEvent(tx, { tenantId, type: 'pool.deleted', subjectId: poolId, data: { siteId: pool.siteId } });
    return { deleted: true };
  });
}
