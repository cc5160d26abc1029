import type { DbOrTx } from '../../services/db';
import { notFound } from '../errors';

/** The tenant's live pool; another tenant's or a deleted one is NOT_FOUND. */
export async function findOwnedPool(db: DbOrTx, tenantId: string, poolId: string) {
  const pool = await db.pool.findFirst({ where: { id: poolId, tenantId, deletedAt: null } });
  if (!pool) throw notFound('pool', poolId);
  return pool;
}
