// The node lifecycle's handles (`node:<nodeId>`): the wake-up after a verb, its abort and
// status, and what a node's state workflow tells it: that it ended, and how. The lifecycle run
// that started a state workflow hears its end from Temporal (the child's close). A run that did
// not start it (the lifecycle continued-as-new, or was started again, while it ran) asks it for
// its end (`reportEnd`), and the state workflow then signals it as its last act: a signal to a
// workflow id without a run id reaches the id's current run.
import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { LIFECYCLE_WORKFLOW_ID_PREFIX } from '../core/metal/lifecycle-client';
import type { JsonValue, ProvisionResult } from '../core/plan';
import { startedWith } from './patches';

/** "Look again": sent with signal-with-start after every verb (services/temporal/starters.ts). */
export const wakeSignal = defineSignal<[]>('wake');
/** The same transition as metal.abort: the running state workflow is stopped (its cleanup runs). */
export const lifecycleAbortSignal = defineSignal<[string]>('abort');

export interface LifecycleStatus {
  /** The last signals refused since this run started (a signal cannot answer its sender). */
  rejectedSignals: { name: string; reason: string }[];
}
export const lifecycleStatusQuery = defineQuery<LifecycleStatus>('status');

export interface StateWorkflowFailure {
  code: string;
  message: string;
}

/** The end of one state workflow, as its lifecycle applies it (`complete` or `fail`). */
export type StateWorkflowEnded = { workflowId: string } & (
  { outcome: 'succeeded'; outputs: Record<string, JsonValue> } | { outcome: 'failed'; error: StateWorkflowFailure }
);

export const stateWorkflowEndedSignal = defineSignal<[StateWorkflowEnded]>('stateWorkflowEnded');
/** To a state workflow, from a lifecycle run that did not start it: signal your end to the lifecycle. */
export const reportEndSignal = defineSignal<[]>('reportEnd');

// Module state is the run's own: the workflow sandbox loads these modules afresh for each run.
let endAsked = false;

/** Called first in a state workflow: lets a lifecycle run that did not start it ask for its end. */
export function acceptEndRequests(): void {
  setHandler(reportEndSignal, () => void (endAsked = true));
}

/** The spec's code and message of a state workflow's failure (a cancellation is ABORTED). */
export function failureOf(err: unknown): StateWorkflowFailure {
  if (err instanceof ApplicationFailure) return { code: err.type ?? 'INTERNAL', message: err.message };
  if (isCancellation(err)) return { code: 'ABORTED', message: err instanceof Error ? err.message || 'cancelled' : 'cancelled' };
  if (err instanceof Error) return { code: 'INTERNAL', message: err.message || err.name };
  return { code: 'INTERNAL', message: String(err) };
}

/**
 * Called by the provision workflow as its very last act, with what it returns or what it throws:
 *
 *   try { const result = await run(); await notifyParentEnded({ result }); return result; }
 *   catch (failure) { await notifyParentEnded({ failure }); throw failure; }
 *
 * Signals `stateWorkflowEnded` to the parent when the parent is a node lifecycle that asked for
 * it (`reportEnd`), or whose code predates asking (patch `state-end-on-request`: it always waited
 * for the signal); a no-op for a workflow started any other way. The run that started it hears
 * the close instead: a signal would cost both workflows an event and a workflow task more. Never
 * throws and is not cancellable: a lifecycle that is gone (terminated) must not fail the state
 * workflow, and a cancelled run must still say it ended.
 */
export async function notifyParentEnded(end: { result: ProvisionResult } | { failure: unknown }): Promise<void> {
  const { parent, workflowId } = workflowInfo();
  if (!parent?.workflowId.startsWith(LIFECYCLE_WORKFLOW_ID_PREFIX)) return;
  if (startedWith('state-end-on-request') && !endAsked) return;
  const ended: StateWorkflowEnded =
    'result' in end
      ? { workflowId, outcome: 'succeeded', outputs: end.result.outputs ?? {} }
      : { workflowId, outcome: 'failed', error: failureOf(end.failure) };
  await CancellationScope.nonCancellable(async () => {
    try {
      // No run id: the lifecycle's current run, whichever it is now.
      await getExternalWorkflowHandle(parent.workflowId).signal(stateWorkflowEndedSignal, ended);
    } catch {
      // The lifecycle is gone; its next run reads the node's state again.
    }
  });
}
