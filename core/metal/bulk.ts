// metal.bulk: one verb on up to 10,000 nodes of one pool. Each node is decided on its own
// (its own transaction, state check and wake-up); the answer reports every node's outcome.
import { appendEvent } from '../events';
import { isIronflowError } from '../errors';
import { findOwnedPool } from '../pools/pool-lookup';
import type { MetalBulkInput, MetalBulkResult } from '../schemas/metal';
import { applyVerb, type MetalDeps, type VerbArgs } from './verbs';

function argsOf(input: MetalBulkInput): VerbArgs {
  if (input.verb === 'undeploy') return { verb: 'release', wipe: input.wipe ?? 'quick' };
  return { verb: input.verb };
}

export async function bulkVerb(deps: MetalDeps, input: MetalBulkInput): Promise<MetalBulkResult> {
  await findOwnedPool(deps.db, input.tenantId, input.poolId);
  const nodeIds = [...new Set(input.nodeIds)];
  await appendEvent(deps.db, { tenantId: input.tenantId, type: 'metal.bulk', subjectId: input.poolId, data: { verb: input.verb, nodes: nodeIds.length, reason: input.reason } });
  const results: MetalBulkResult['results'] = [];
  const args = argsOf(input);
  for (const nodeId of nodeIds) {
    try {
      const node = await applyVerb(deps, { tenantId: input.tenantId, nodeId, poolId: input.poolId }, args);
      results.push({ nodeId, outcome: 'applied', provisionState: node.provisionState });
    } catch (err) {
      if (!isIronflowError(err)) throw err;
      results.push({ nodeId, outcome: 'refused', error: { code: err.code, message: err.message } });
    }
  }
  const applied = results.filter((r) => r.outcome === 'applied').length;
  return { verb: input.verb, applied, refused: results.length - applied, results };
}
