// metal.adoptToken: mints the join token of role `adopt` a machine with its own OS joins with
// (services/attestors/adopt-attestor.ts). Only for the tenant's live pool that runs our agent; the
// bearer is in this answer only.
import { mintBearer } from '../bearer';
import type { Db } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { newId } from '../ids';
import { JOIN_TOKEN_SCHEME } from '../../core/join-token-scheme';
import { ADOPT_TOKEN_ROLE } from '../attestors/adopt-attestor';
import { findOwnedPool } from '../../core/pools/pool-lookup';
import type { AdoptTokenCreateInput, AdoptTokenView } from '../../core/schemas/adopt';
import { poolPolicySchema } from '../../core/schemas/pools';

export async function createAdoptToken(db: Db, input: AdoptTokenCreateInput): Promise<AdoptTokenView> {
  return db.$transaction(async (tx) => {
    const pool = await findOwnedPool(tx, input.tenantId, input.poolId);
    if (poolPolicySchema.parse(pool.policy).agent === 'none') {
      throw new IronflowError(
        'INVALID_STATE',
        `pool ${pool.id} is agentless (agent: none): its machines never run the agent, so none can be adopted; enroll them by their BMC`,
        { path: 'poolId' },
      );
    }
    const id = newId('joinToken');
    const { bearer, secretHash } = mintBearer(JOIN_TOKEN_SCHEME, id);
    const expiresAt = new Date(Date.now() + input.ttlSeconds * 1000);
    await tx.joinToken.create({
      data: {
        id,
        tenantId: input.tenantId,
        siteId: pool.siteId,
        poolId: pool.id,
        role: ADOPT_TOKEN_ROLE,
        secretHash,
        maxUses: input.maxUses,
        usesLeft: input.maxUses,
        expiresAt,
      },
    });
    await appendEvent(tx, {
      tenantId: input.tenantId,
      type: 'security.adopt-token.created',
      subjectId: id,
      data: { poolId: pool.id, siteId: pool.siteId, maxUses: input.maxUses, expiresAt: expiresAt.toISOString() },
    });
    return {
      id,
      tenantId: input.tenantId,
      siteId: pool.siteId,
      poolId: pool.id,
      role: 'adopt',
      maxUses: input.maxUses,
      expiresAt: expiresAt.toISOString(),
      token: bearer,
    };
  });
}
