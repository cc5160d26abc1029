// The adopt attestor (spec 004 "Adopt"): a machine that already runs its own OS joins with an
// adopt token bound to a pool (no BMC, no reimage) and becomes a NEW metal node of that pool,
// role `node`, in `adopting` while the pool's acceptance checks run (straight to `adopted`
// when the pool has none). An agentless pool (agent: none) adopts nothing: its machines never
// run our agent. The token use is consumed in the join's transaction.
import { newId } from '../ids';
import { refusal } from '../joins/refusal';
import { stateWorkflowId } from '../temporal/workflow-ids';
import { poolPolicySchema } from '../../core/schemas/pools';
import type { Attestor } from '../../core/attestors/attestor';
import { consumeTokenUse } from './consume-token-use';

export const ADOPT_TOKEN_ROLE = 'adopt';

export const adoptAttestor: Attestor = {
  role: ADOPT_TOKEN_ROLE,
  async admit({ tx, token, now, claimedNodeId }) {
    if (!token.poolId || token.nodeId)
      throw refusal('UNAUTHENTICATED', 'token-unbound', `adopt token ${token.id} is not bound to a pool`, { tokenId: token.id });
    if (claimedNodeId !== undefined) {
      throw refusal(
        'UNAUTHENTICATED',
        'node-claimed',
        `an adopt token joins a new node; join without --node-id (this token is not the user data of node ${claimedNodeId})`,
        { tokenId: token.id },
      );
    }
    await consumeTokenUse(tx, token, now);
    const pool = await tx.pool.findFirst({ where: { id: token.poolId, tenantId: token.tenantId, deletedAt: null } });
    if (!pool) throw refusal('INVALID_STATE', 'pool-deleted', `pool ${token.poolId} of adopt token ${token.id} is deleted or gone`, { tokenId: token.id });
    const policy = poolPolicySchema.parse(pool.policy);
    if (policy.agent === 'none') {
      throw refusal('INVALID_STATE', 'pool-agentless', `pool ${pool.id} is agentless (agent: none): its machines never run the agent, so none is adopted`, {
        tokenId: token.id,
        poolId: pool.id,
      });
    }
    const nodeId = newId('node');
    const provision =
      policy.acceptanceChecks.length > 0 ? { state: 'adopting', workflowId: stateWorkflowId(nodeId, 'adopting', 1) } : { state: 'adopted', workflowId: null };
    return { tenantId: pool.tenantId, siteId: pool.siteId, poolId: pool.id, nodeId, newNode: true, role: 'node', provision };
  },
};
