// pools.create: a pool belongs to one site and one tenant (the site's owner). With an
// idempotency key, a retry answers the same pool while it is unchanged; a different
// request under the key is CONFLICT.
import type { Db } from '../db';
import { isUniqueViolation } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { newId } from '../ids';
import { requestHash } from '../request-hash';
import type { PoolCreateInput, PoolView } from '../../core/schemas/pools';
import { referenceLiveSite } from '../../core/sites/site-lookup';
import { poolView } from '../../core/pools/pool-view';

export async function createPool(db: Db, input: PoolCreateInput): Promise<{ pool: PoolView; created: boolean }> {
  const asked = requestHash({ siteId: input.siteId, class: input.class, policy: input.policy });
  const replayOf = async () => {
    if (!input.idempotencyKey) return undefined;
    const existing = await db.pool.findUnique({ where: { tenantId_idempotencyKey: { tenantId: input.tenantId, idempotencyKey: input.idempotencyKey } } });
    if (!existing) return undefined;
    const view = poolView(existing);
    // The pool has no stored request hash: compare with what it holds now.
    if (existing.deletedAt || requestHash({ siteId: view.siteId, class: view.class, policy: view.policy }) !== asked) {
      throw new IronflowError('CONFLICT', `idempotency key ${input.idempotencyKey} names pool ${existing.id}, which differs from this request; use a new key`, {
        path: 'idempotencyKey',
        poolId: existing.id,
      });
    }
    return { pool: view, created: false };
  };

  const replay = await replayOf();
  if (replay) return replay;
  const id = newId('pool');
  try {
    const row = await db.$transaction(async (tx) => {
      await referenceLiveSite(tx, input.tenantId, input.siteId);
      const created = await tx.pool.create({
        data: {
          id,
          tenantId: input.tenantId,
          siteId: input.siteId,
          class: input.class,
          policy: input.policy as object,
          idempotencyKey: input.idempotencyKey ?? null,
        },
      });
      await appendEvent(tx, { tenantId: input.tenantId, type: 'pool.created', subjectId: id, data: { siteId: input.siteId, class: input.class } });
      return created;
    });
    return { pool: poolView(row), created: true };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await replayOf();
    if (!winner) throw error;
    return winner;
  }
}
