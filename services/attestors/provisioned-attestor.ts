// The provisioned attestor (spec 003 "User data"): the installed OS's agent joins with the
// single-use token userdata.render minted and becomes the SAME node (role `node`), only
// while the workflow that minted it still runs (asked of Temporal) and only for the node id
// the OS was installed for. The token use is consumed in the join's transaction.
import { refusal } from '../joins/refusal';
import type { Attestor } from '../../core/attestors/attestor';
import { consumeTokenUse } from './consume-token-use';

export const provisionedAttestor: Attestor = {
  role: 'provisioned',
  async admit({ tx, token, now, workflowRuns, claimedNodeId }) {
    if (!token.nodeId || !token.workflowId)
      throw refusal('UNAUTHENTICATED', 'token-unbound', `provisioned token ${token.id} is not bound to a node and a workflow`, { tokenId: token.id });
    if (claimedNodeId !== undefined && claimedNodeId !== token.nodeId) {
      throw refusal(
        'UNAUTHENTICATED',
        'node-mismatch',
        `this token was minted for another node than ${claimedNodeId}; an installed OS joins only as the node it was installed for`,
        { tokenId: token.id },
      );
    }
    // The token first (used, expired, revoked are the usual answers), then the workflow:
    // a refusal rolls the transaction back, so a refused join consumes nothing.
    await consumeTokenUse(tx, token, now);
    const runs = workflowRuns ? await workflowRuns(token.workflowId, token.nodeId) : false;
    if (!runs)
      throw refusal(
        'INVALID_STATE',
        'workflow-not-running',
        `workflow ${token.workflowId} that minted this token is not running; a provisioned token joins only during its deploy`,
        { tokenId: token.id },
      );
    const node = await tx.node.findUnique({ where: { id: token.nodeId } });
    if (!node || node.deletedAt || node.siteId !== token.siteId)
      throw refusal('INVALID_STATE', 'node-gone', `node ${token.nodeId} of provisioned token ${token.id} is gone`, { tokenId: token.id });
    return { tenantId: node.tenantId, siteId: node.siteId, poolId: node.poolId, nodeId: node.id, newNode: false, role: 'node' };
  },
};
