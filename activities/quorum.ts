// The provision workflow's side of the destructive-batch quorum (workflows/quorum-gate.ts):
// ask for the run's batch (or find the bulk batch that already covers this node and state),
// and read where it stands, with the bundle the agents check once it is approved.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { batchBundle, findBatch, nodeIdsOf, requestBatch, type BatchStatus } from '../services/quorum/batch-store';
import type { DestructiveKind } from '../core/quorum/destructive';
import type { BatchDocument, QuorumBundle } from '../services/quorum/documents';
import { findQuorumPolicy, policyOf } from '../services/quorum/policy-store';
import { QuorumRefusal } from '../services/quorum/verify';
import { POWER_RUN_STATE } from '../services/metal/power';
import type { ActivityDeps } from './deps';

export interface QuorumBatchRequest {
  tenantId: string;
  nodeId: string;
  workflowId: string;
  provisionState: string;
  profileRef: string;
  commands: DestructiveKind[];
}

export interface QuorumBatchState {
  batchId: string;
  kind: string;
  status: BatchStatus;
  approvals: number;
  required: number;
  expiresAt: string;
  /** Only once approved: what travels with each destructive command. */
  bundle?: QuorumBundle;
}

/** How many recent bulk batches a run looks through for one that covers its node. */
const BULK_LOOKBACK = 5;

export function createQuorumActivities(deps: ActivityDeps) {
  async function stateOf(batchId: string, tenantId: string, nodeId: string): Promise<QuorumBatchState> {
    const row = await findBatch(deps.db, tenantId, batchId);
    const [approvals, policy] = await Promise.all([deps.db.quorumApproval.count({ where: { batchId } }), findQuorumPolicy(deps.db, tenantId)]);
    const state: QuorumBatchState = {
      batchId,
      kind: row.kind,
      status: row.status as BatchStatus,
      approvals,
      required: policy ? policyOf(policy).required : 0,
      expiresAt: row.expiresAt.toISOString(),
    };
    if (row.status !== 'approved') return state;
    try {
      return { ...state, bundle: await batchBundle(deps.db, row, nodeId) };
    } catch (err) {
      if (err instanceof QuorumRefusal) throw ApplicationFailure.nonRetryable(err.message, 'PERMISSION_DENIED', err.details);
      throw err;
    }
  }

  /** A bulk run's batch that covers this node, this state and these commands, still usable. */
  async function bulkBatchFor(input: QuorumBatchRequest): Promise<string | null> {
    const rows = await deps.db.quorumBatch.findMany({
      where: { tenantId: input.tenantId, kind: 'bulk', status: { in: ['pending', 'approved'] }, expiresAt: { gt: new Date() } },
      orderBy: { createdAt: 'desc' },
      take: BULK_LOOKBACK,
    });
    const covering = rows.find((row) => {
      const document = row.document as unknown as BatchDocument;
      return (
        document.states.includes(input.provisionState) && input.commands.every((k) => document.commands.includes(k)) && nodeIdsOf(row).includes(input.nodeId)
      );
    });
    return covering?.id ?? null;
  }

  return {
    /** The run's batch: null when the tenant has no quorum policy (nothing to wait for). */
    async quorumRequestBatch(input: QuorumBatchRequest): Promise<QuorumBatchState | null> {
      if (!(await findQuorumPolicy(deps.db, input.tenantId))) return null;
      const bulk = await bulkBatchFor(input);
      if (bulk) return stateOf(bulk, input.tenantId, input.nodeId);
      const power = input.provisionState === POWER_RUN_STATE;
      const row = await requestBatch(deps.db, {
        tenantId: input.tenantId,
        kind: power ? 'power' : 'workflow',
        subject: input.workflowId,
        // What approvers read: what will happen to which machine, and the run that asks.
        reason: `${power ? 'power command' : input.provisionState} on ${input.nodeId} with profile ${input.profileRef} (${input.commands.join(', ')}; workflow ${input.workflowId})`,
        commands: input.commands,
        states: [input.provisionState],
        nodeIds: [input.nodeId],
      });
      if (!row) return null; // the policy was removed in between
      Context.current().log.info('quorum batch requested', { batchId: row.id, workflowId: input.workflowId });
      return stateOf(row.id, input.tenantId, input.nodeId);
    },

    async quorumBatchState(input: { batchId: string; tenantId: string; nodeId: string }): Promise<QuorumBatchState> {
      return stateOf(input.batchId, input.tenantId, input.nodeId);
    },
  };
}
export type QuorumActivities = ReturnType<typeof createQuorumActivities>;
