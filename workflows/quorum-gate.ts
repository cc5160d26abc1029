// The provision workflow's quorum gate (docs/quorum.md). A run whose plan sends destructive
// commands asks for its batch when it starts (so approvers can sign while harmless steps run),
// and before its first destructive step waits for the batch's approval, saying so in its
// status ("awaiting approval of batch bat_… (1/2)"), until the batch expires. From then on
// every step's input carries the bundle the agents check. Cleanup never waits: a destructive
// cleanup step of a run never approved did nothing destructive to undo, and is skipped.
import { ApplicationFailure, condition, defineSignal, setHandler } from '@temporalio/workflow';
import type { QuorumActivities, QuorumBatchState } from '../activities/quorum';
import type { Plan, PlanStep, ProvisionTarget } from '../core/plan';
import { QUORUM_BATCH_SIGNAL } from '../core/quorum/batch-signal';
import { destructiveKindsOf, destructiveKindsOfStep } from '../core/quorum/destructive';
import type { QuorumBundle } from '../services/quorum/documents';
import { localBookkeeping } from './local-bookkeeping';

/** The batch's reads and writes: local activities since 2026-12-03 (local-bookkeeping.ts). */
const acts = localBookkeeping<QuorumActivities>('provision-local-quorum', {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10, maximumInterval: '5 seconds', nonRetryableErrorTypes: ['PERMISSION_DENIED', 'NOT_FOUND', 'INVALID_INPUT'] },
});

export const quorumBatchSignal = defineSignal<[]>(QUORUM_BATCH_SIGNAL);

/** How often a waiting run looks again without a signal (an approval signals it at once). */
const LOOK_AGAIN_MS = 15_000;

const stepUses = (steps: readonly PlanStep[]): string[] => steps.flatMap((s) => [s.use, ...(s.fallback ? [s.fallback.use] : [])]);

// Nothing to ask or wait for is answered at once, without a promise: the SDK's stack-trace
// promise hook pays for every promise a workflow makes (sdk-typescript#1587).
export interface QuorumGate {
  /**
   * Asks for the run's batch (nothing when the tenant has no quorum); undefined when the plan
   * sends no destructive command: nothing to ask.
   */
  start(): Promise<void> | undefined;
  /**
   * Before a step: whether it runs (false: a cleanup step that must be skipped); a promise when
   * the step is destructive and waits for the batch's approval.
   */
  before(step: PlanStep, cleanup: boolean): boolean | Promise<boolean>;
  /** The approved bundle, for every step's input. */
  bundle(): QuorumBundle | undefined;
}

export function quorumGate(plan: Plan, target: ProvisionTarget, workflowId: string, waitFor: (what: string | null) => void): QuorumGate {
  let signals = 0;
  setHandler(quorumBatchSignal, () => void (signals += 1));
  const commands = destructiveKindsOf(stepUses([...plan.steps, ...plan.acceptance, ...plan.cleanup]));
  let state: QuorumBatchState | null = null;

  const describe = (s: QuorumBatchState) => `approval of batch ${s.batchId} (${s.approvals}/${s.required})`;

  const requestBatch = async () => {
    state = await acts().quorumRequestBatch({
      tenantId: target.tenantId,
      nodeId: target.nodeId,
      workflowId,
      provisionState: target.provisionState,
      profileRef: plan.profile.ref,
      commands,
    });
  };
  /** Waits until the batch is approved; throws when it is refused or expires first. */
  const approval = async (batch: QuorumBatchState): Promise<true> => {
    for (;;) {
      if (batch.status === 'approved' && batch.bundle) return true;
      if (batch.status === 'refused') {
        throw ApplicationFailure.nonRetryable(
          `batch ${batch.batchId} was refused by an approver (quorum.batch.refused says why); nothing destructive was sent`,
          'PERMISSION_DENIED',
          { reason: 'quorum-refused', batchId: batch.batchId },
        );
      }
      if (batch.status === 'expired') {
        throw ApplicationFailure.nonRetryable(
          `batch ${batch.batchId} expired at ${batch.expiresAt} with ${batch.approvals} of ${batch.required} approvals; nothing destructive was sent`,
          'PERMISSION_DENIED',
          { reason: 'quorum-expired', batchId: batch.batchId },
        );
      }
      waitFor(describe(batch));
      const seen = signals;
      const left = Date.parse(batch.expiresAt) - Date.now();
      await condition(() => signals !== seen, Math.max(1000, Math.min(LOOK_AGAIN_MS, left)));
      batch = await acts().quorumBatchState({ batchId: batch.batchId, tenantId: target.tenantId, nodeId: target.nodeId });
      state = batch;
    }
  };

  return {
    start() {
      if (commands.length === 0) return undefined;
      return requestBatch();
    },
    before(step, cleanup) {
      if (!state || state.bundle || destructiveKindsOfStep(step.use).length === 0) return true;
      if (cleanup) return false;
      return approval(state);
    },
    bundle: () => state?.bundle,
  };
}
