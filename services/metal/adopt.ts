// The end of `adopting`: the acceptance run succeeded → adopted (schedulable); it failed →
// failed with failedFrom adopting, lastError naming the check, maintenance on (like any
// failure). Through the state table (acceptanceMove) and the same guarded update as the verbs.
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Tx } from '../db';
import { acceptanceMove } from '../../core/provision-states';
import { holdOnFailure } from './maintenance';
import { commitMove, stateOf } from './transition';

export interface AcceptanceOutcome {
  workflowId: string;
  outcome: 'succeeded' | 'failed';
  error?: { code: string; message: string };
}

export async function applyAcceptance(tx: Tx, node: Node, outcome: AcceptanceOutcome): Promise<Node> {
  const passed = outcome.outcome === 'succeeded';
  const move = acceptanceMove(stateOf(node), passed);
  if (passed) return commitMove(tx, node, move, { event: { workflowId: outcome.workflowId, outcome: 'accepted' } });
  const error = outcome.error ?? { code: 'INTERNAL', message: 'the acceptance checks failed' };
  const hold = await holdOnFailure(tx, node, `adopting failed: ${error.code}: ${error.message}`, undefined);
  return commitMove(tx, node, move, { data: { failedFrom: 'adopting', lastError: error, ...hold }, event: { workflowId: outcome.workflowId, error } });
}
