// pools.update: class and policy fields (each given field replaces the stored one), with
// the version read guarding against lost updates.
import type { Db } from '../db';
import { announceSiteCacheChange } from '../images/prewarm-sites';
import { IronflowError, parseWith } from '../../core/errors';
import { appendEvent } from '../events';
import { poolPolicySchema, type PoolUpdateInput, type PoolView } from '../../core/schemas/pools';
import { findOwnedPool } from '../../core/pools/pool-lookup';
import { poolView } from '../../core/pools/pool-view';

export async function updatePool(db: Db, poolId: string, input: PoolUpdateInput): Promise<PoolView> {
  if (input.class === undefined && input.policy === undefined) {
    throw new IronflowError('INVALID_INPUT', 'nothing to change: give class or policy', { path: 'policy' });
  }
  return db.$transaction(async (tx) => {
    const pool = await findOwnedPool(tx, input.tenantId, poolId);
    if (input.version !== undefined && input.version !== pool.version) {
      throw new IronflowError('CONFLICT', `pool ${poolId} is at version ${pool.version}, not ${input.version}; read it again and retry`, {
        path: 'version',
        version: pool.version,
      });
    }
    const current = poolView(pool).policy;
    const patch = input.policy ?? {};
    const merged = { ...current, ...patch, hardwareProfile: patch.hardwareProfile === null ? undefined : (patch.hardwareProfile ?? current.hardwareProfile) };
    const policy = parseWith(poolPolicySchema, merged);
    const updated = await tx.pool.updateMany({
      where: { id: poolId, version: pool.version, deletedAt: null },
      data: { ...(input.class !== undefined ? { class: input.class } : {}), policy: policy as object, version: pool.version + 1 },
    });
    if (updated.count !== 1) throw new IronflowError('CONFLICT', `pool ${poolId} changed while updating; read it again and retry`, { path: 'version' });
    if (JSON.stringify(current.prewarmImages ?? []) !== JSON.stringify(policy.prewarmImages ?? [])) {
      // The site agents' desired cacheImages follow (recomputed on their next heartbeat).
      await announceSiteCacheChange(tx, pool.siteId, { poolId, prewarmImages: policy.prewarmImages ?? [] });
    }
    await appendEvent(tx, {
      tenantId: input.tenantId,
      type: 'pool.updated',
      subjectId: poolId,
      data: { class: input.class, policyFields: Object.keys(patch), version: pool.version + 1 },
    });
    return poolView(await tx.pool.findUniqueOrThrow({ where: { id: poolId } }));
  });
}
