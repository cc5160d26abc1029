// `node:<nodeId>`: the node lifecycle (spec 004's metal reconciler). Level-triggered: woken
// by signal-with-start after every verb, it reads the node, makes sure exactly the workflow
// of its workflow-driven state runs (as a child: the generic provision workflow), applies
// `complete` or `fail` when that ends, and chains (enrolling → inspecting → commissioning →
// ready) with no caller. It ends when the node rests, and continues-as-new after eight
// transitions, or earlier if its history grows.
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { NodeLifecycleActivities } from '../activities/node-lifecycle';
import type { StateOutcome } from '../services/metal/lifecycle-moves';
import type { ProvisionResult } from '../core/plan';
import { searchAttributeKeys } from '../core/search-attributes';
import { lifecycleDetails, planDetails, provisionSummary } from '../core/workflow-summaries';
import { installConfirmMacHandlers, noteRejectedSignal } from './confirm-mac-handlers';
import { provision } from './provision';

const acts = proxyActivities<Omit<NodeLifecycleActivities, 'lifecycleAwaitWorkflow'>>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 20, maximumInterval: '10 seconds', nonRetryableErrorTypes: ['NOT_FOUND'] },
});
const waits = proxyActivities<Pick<NodeLifecycleActivities, 'lifecycleAwaitWorkflow'>>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds', nonRetryableErrorTypes: ['NOT_FOUND'] },
});

export const wakeSignal = defineSignal<[]>('wake');
/** The same transition as metal.abort: the running state workflow is stopped (its cleanup runs). */
export const lifecycleAbortSignal = defineSignal<[string]>('abort');

export interface LifecycleStatus {
  /** The last signals refused since this run started (a signal cannot answer its sender). */
  rejectedSignals: { name: string; reason: string }[];
}
export const lifecycleStatusQuery = defineQuery<LifecycleStatus>('status');

export const MAX_TRANSITIONS_PER_RUN = 8;
const HISTORY_LIMIT = 2000;

export interface NodeLifecycleInput {
  nodeId: string;
}

function failureOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'INTERNAL', message: cause.message };
  if (cause instanceof Error) return { code: cause.name === 'CancelledFailure' ? 'ABORTED' : 'INTERNAL', message: cause.message || cause.name };
  return { code: 'INTERNAL', message: String(cause) };
}

export async function nodeLifecycle(input: NodeLifecycleInput): Promise<{ state: string | null; transitions: number }> {
  const { nodeId } = input;
  let wakes = 0;
  const aborts: string[] = [];
  setHandler(wakeSignal, () => void (wakes += 1));
  setHandler(lifecycleAbortSignal, (reason) => void aborts.push(typeof reason === 'string' ? reason : 'aborted'));
  // metal.confirmMac by signal or Update on node:<id>, the workflow operators find by NodeId.
  const rejectedSignals: LifecycleStatus['rejectedSignals'] = [];
  installConfirmMacHandlers(nodeId, { confirmed: () => undefined, rejected: (reason) => noteRejectedSignal(rejectedSignals, { name: 'confirmMac', reason }) });
  setHandler(lifecycleStatusQuery, () => ({ rejectedSignals }));

  const handleAborts = async () => {
    while (aborts.length > 0) await acts.lifecycleAbort({ nodeId, reason: aborts.shift() as string });
  };

  let transitions = 0;
  let state: string | null = null;
  for (;;) {
    await handleAborts();
    const seen = wakes;
    const next = await acts.lifecycleNext(nodeId);
    state = next.state;
    upsertSearchAttributes([{ key: searchAttributeKeys.ProvisionState, value: state ?? '' }]);
    // The Web UI's current details: the state driven now and its child, or where the node rests.
    setCurrentDetails(lifecycleDetails({ state, since: new Date().toISOString(), transitions, ...(next.kind === 'run' ? { child: next.workflowId } : {}) }));
    if (next.kind === 'rest') {
      if (wakes !== seen || aborts.length > 0) continue; // a verb arrived while we looked
      return { state, transitions };
    }
    if (next.kind === 'run') {
      const outcome = await runStateWorkflow(nodeId, next.workflowId, next.plan, next.target, aborts, handleAborts);
      const applied = await acts.lifecycleApply({
        ...outcome,
        nodeId,
        workflowId: next.workflowId,
        ...(outcome.outcome === 'succeeded' ? { role: next.plan.role } : {}),
      });
      state = applied.state;
    }
    transitions += 1;
    if (transitions >= MAX_TRANSITIONS_PER_RUN || workflowInfo().historyLength > HISTORY_LIMIT) {
      await handleAborts();
      await continueAsNew<typeof nodeLifecycle>(input);
    }
  }
}

type RunOutcome = Pick<StateOutcome, 'outcome' | 'outputs' | 'error'>;

async function runStateWorkflow(
  nodeId: string,
  workflowId: string,
  plan: Parameters<typeof provision>[0],
  target: Parameters<typeof provision>[1],
  aborts: string[],
  handleAborts: () => Promise<void>,
): Promise<RunOutcome> {
  let child;
  try {
    child = await startChild(provision, {
      workflowId,
      args: [plan, target],
      // The child outlives a continue-as-new of this run; an id is used once.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: searchAttributeKeys.NodeId, value: nodeId },
        { key: searchAttributeKeys.SiteId, value: target.siteId },
        { key: searchAttributeKeys.TenantId, value: target.tenantId },
        { key: searchAttributeKeys.ProvisionState, value: target.provisionState },
        { key: searchAttributeKeys.ProfileRef, value: plan.profile.ref },
      ],
      memo: { profile: plan.profile.ref, profileTenant: plan.profile.tenantId, step: null },
      staticSummary: provisionSummary({ nodeId, state: target.provisionState, profileRef: plan.profile.ref, siteId: target.siteId }),
      staticDetails: planDetails(plan),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // Started by an earlier run of this lifecycle: wait for it through the client.
    const ended = await waits.lifecycleAwaitWorkflow(workflowId);
    return ended.outcome === 'succeeded' ? { outcome: 'succeeded', outputs: ended.result.outputs } : { outcome: 'failed', error: ended.error };
  }
  // An abort or a superseding verb may have landed between our read and the start.
  if (!(await acts.lifecycleStarted({ nodeId, workflowId, profileRef: plan.profile.ref }))) {
    await getExternalWorkflowHandle(workflowId).signal('abort', 'the node left this state before its workflow started');
  }
  const result = child.result();
  let settled = false;
  result.then(
    () => void (settled = true),
    () => void (settled = true),
  );
  for (;;) {
    await condition(() => settled || aborts.length > 0);
    if (aborts.length > 0) {
      await handleAborts();
      continue;
    }
    break;
  }
  try {
    const done: ProvisionResult = await result;
    return { outcome: 'succeeded', outputs: done.outputs ?? {} };
  } catch (err) {
    return { outcome: 'failed', error: failureOf(err) };
  }
}
