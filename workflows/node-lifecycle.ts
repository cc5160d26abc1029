// `node:<nodeId>`: the node lifecycle (spec 004's metal reconciler). Level-triggered: woken
// by signal-with-start after every verb, it reads the node, makes sure exactly the workflow
// of its workflow-driven state runs (as a child: the generic provision workflow), applies
// `complete` or `fail` when that ends, and chains (enrolling → inspecting → commissioning →
// ready) with no caller. It hears a state workflow's end from its close; a run that continued
// as new while the state workflow ran asks it to signal its end (lifecycle-handles.ts). It ends
// when the node rests, and continues-as-new after eight transitions, or earlier if its history grows.
import {
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  WorkflowIdReusePolicy,
  type SignalDefinition,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { NodeLifecycleActivities } from '../activities/node-lifecycle';
import { nonRetryableCodes } from '../core/errors';
import { CURRENT_PATCH_LEVEL } from '../core/workflow-patches';
import { searchAttributeKeys } from '../core/search-attributes';
import { lifecycleDetails, planDetails, provisionSummary } from '../core/workflow-summaries';
import { installConfirmMacHandlers, noteRejectedSignal } from './confirm-mac-handlers';
import {
  failureOf,
  lifecycleAbortSignal,
  lifecycleStatusQuery,
  reportEndSignal,
  stateWorkflowEndedSignal,
  wakeSignal,
  type LifecycleStatus,
  type StateWorkflowEnded,
} from './lifecycle-handles';
import { provision } from './provision';
import { localBookkeeping } from './local-bookkeeping';
import { enterPatchLevel, takesPatch } from './patches';
import { abortSignal } from './provision-handles';

// The lifecycle's handles live with the state workflow's end signal; importers read them here too.
export { lifecycleAbortSignal, lifecycleStatusQuery, wakeSignal, type LifecycleStatus } from './lifecycle-handles';

/** The lifecycle's reads and writes of the node's row: local activities since 2026-12-02 (local-bookkeeping.ts). */
const lifecycleActs = localBookkeeping<NodeLifecycleActivities>('lifecycle-local-activities', {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 20, maximumInterval: '10 seconds', nonRetryableErrorTypes: [...nonRetryableCodes] },
});

export const MAX_TRANSITIONS_PER_RUN = 8;
/** The history length (events) past which a run continues as new, waiting or not. */
export const HISTORY_LIMIT = 2000;
const historyTooLong = (): boolean => workflowInfo().historyLength > HISTORY_LIMIT || workflowInfo().continueAsNewSuggested;

export interface NodeLifecycleInput {
  nodeId: string;
  /** The changes its starter's code knew (patches.ts); none in runs begun before levels. */
  patchLevel?: number;
}

/**
 * Signals a state workflow if it still runs: one that never started or has closed has nothing to
 * stop (an abort) and nothing to report (a `reportEnd`: the look that follows finds how it ended).
 */
async function signalIfRunning<Args extends unknown[]>(workflowId: string, signal: SignalDefinition<Args>, ...args: Args): Promise<void> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(signal, ...args);
  } catch (err) {
    if (isCancellation(err)) throw err;
  }
}

/** Asks a state workflow to stop (its cleanup runs). */
const stopStateWorkflow = (workflowId: string, reason: string) => signalIfRunning(workflowId, abortSignal, reason);

/** What the lifecycle's run shares with its wait for a state workflow. */
interface LifecycleRun {
  nodeId: string;
  wakes(): number;
  aborts: string[];
  handleAborts(): Promise<void>;
  /** The ends state workflows signalled, by workflow id, not yet taken. */
  ended: Map<string, StateWorkflowEnded>;
}

export async function nodeLifecycle(input: NodeLifecycleInput): Promise<{ state: string | null; transitions: number }> {
  const { nodeId } = input;
  enterPatchLevel(input.patchLevel);
  // A continued run starts afresh on this code: it knows what this code knows.
  const continued: NodeLifecycleInput = { nodeId, patchLevel: CURRENT_PATCH_LEVEL };
  let wakes = 0;
  const aborts: string[] = [];
  const ended = new Map<string, StateWorkflowEnded>();
  setHandler(wakeSignal, () => void (wakes += 1));
  setHandler(lifecycleAbortSignal, (reason) => void aborts.push(typeof reason === 'string' ? reason : 'aborted'));
  setHandler(stateWorkflowEndedSignal, (end) => void ended.set(end.workflowId, end));
  // metal.confirmMac by signal or Update on node:<id>, the workflow operators find by NodeId.
  const rejectedSignals: LifecycleStatus['rejectedSignals'] = [];
  installConfirmMacHandlers(nodeId, { confirmed: () => undefined, rejected: (reason) => noteRejectedSignal(rejectedSignals, { name: 'confirmMac', reason }) });
  setHandler(lifecycleStatusQuery, () => ({ rejectedSignals }));

  // The abort's transition is an activity; the state workflow it leaves is stopped from here.
  const handleAborts = async () => {
    while (aborts.length > 0) {
      const done = await lifecycleActs().lifecycleAbort({ nodeId, reason: aborts.shift() as string });
      if (done.aborted && done.stop) await stopStateWorkflow(done.stop, done.reason);
    }
  };
  const run: LifecycleRun = { nodeId, wakes: () => wakes, aborts, handleAborts, ended };

  let transitions = 0;
  let state: string | null = null;
  for (;;) {
    await handleAborts();
    const seen = wakes;
    const next = await lifecycleActs().lifecycleNext(nodeId);
    state = next.state;
    upsertSearchAttributes([{ key: searchAttributeKeys.ProvisionState, value: state ?? '' }]);
    // The Web UI's current details: the state driven now and its child, or where the node rests.
    setCurrentDetails(lifecycleDetails({ state, since: new Date().toISOString(), transitions, ...(next.kind === 'run' ? { child: next.workflowId } : {}) }));
    if (next.kind === 'rest') {
      if (wakes !== seen || aborts.length > 0) continue; // a verb arrived while we looked
      return { state, transitions };
    }
    if (next.kind === 'run') {
      const end = await runStateWorkflow(run, next.workflowId, next.plan, next.target);
      // A long wait grew the history: the child runs on (ABANDON) and tells the next run when it ends.
      if (end === null) await continueAsNew<typeof nodeLifecycle>(continued);
      else {
        const applied = await lifecycleActs().lifecycleApply({
          nodeId,
          workflowId: next.workflowId,
          ...(end.outcome === 'succeeded' ? { outcome: 'succeeded', outputs: end.outputs, role: next.plan.role } : { outcome: 'failed', error: end.error }),
        });
        state = applied.state;
      }
    }
    transitions += 1;
    if (transitions >= MAX_TRANSITIONS_PER_RUN || historyTooLong()) {
      await handleAborts();
      await continueAsNew<typeof nodeLifecycle>(continued);
    }
  }
}

/**
 * Starts the state's workflow (or finds it started by an earlier run of this lifecycle, and asks
 * it to signal its end) and waits for its end; aborts are applied meanwhile. Null when this run's
 * history grew too long to wait on: continue-as-new, and the next run waits instead.
 */
async function runStateWorkflow(
  run: LifecycleRun,
  workflowId: string,
  plan: Parameters<typeof provision>[0],
  target: Parameters<typeof provision>[1],
): Promise<StateWorkflowEnded | null> {
  const { nodeId } = run;
  let child;
  try {
    child = await startChild(provision, {
      workflowId,
      args: [plan, target, CURRENT_PATCH_LEVEL],
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
      memo: { profile: plan.profile.ref, profileTenant: plan.profile.tenantId },
      staticSummary: provisionSummary({ nodeId, state: target.provisionState, profileRef: plan.profile.ref, siteId: target.siteId }),
      staticDetails: planDetails(plan),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // Started by an earlier run of this lifecycle: asked, it signals its end to this run. Asked
    // before the look below, so an end is either signalled or found by the look, never missed.
    if (takesPatch('state-end-on-request')) await signalIfRunning(workflowId, reportEndSignal);
  }
  // An abort or a superseding verb may have landed between our read and the start.
  if (child && !(await lifecycleActs().lifecycleStarted({ nodeId, workflowId, profileRef: plan.profile.ref }))) {
    await stopStateWorkflow(workflowId, 'the node left this state before its workflow started');
  }
  // The end of a child this run started, from Temporal (its close): a child started with
  // state-end-on-request signals only when asked, and none can signal a termination or timeout.
  let unsignalled: StateWorkflowEnded | undefined;
  child?.result().then(
    (result) => void (unsignalled = { workflowId, outcome: 'succeeded', outputs: result.outputs ?? {} }),
    (err: unknown) => void (unsignalled = { workflowId, outcome: 'failed', error: failureOf(err instanceof ChildWorkflowFailure ? err.cause : err) }),
  );
  // A wake (any verb) makes us look whether it ended unheard; so does finding an earlier run's child.
  let looked = child ? run.wakes() : -1;
  try {
    for (;;) {
      await condition(() => run.ended.has(workflowId) || unsignalled !== undefined || run.aborts.length > 0 || run.wakes() !== looked || historyTooLong());
      const end = run.ended.get(workflowId) ?? unsignalled;
      if (end) {
        // A child that signals its end (one started before state-end-on-request) does so as its
        // last act and closes a workflow task later. This run's end (when the node rests) sent
        // before the close lands would be refused by Temporal (UnhandledCommand): the task failed
        // and replayed, its local activities run twice.
        if (child && unsignalled === undefined && takesPatch('lifecycle-waits-child-close')) await condition(() => unsignalled !== undefined);
        return end;
      }
      if (run.aborts.length > 0) {
        await run.handleAborts();
        continue;
      }
      if (run.wakes() !== looked) {
        looked = run.wakes();
        const closed = await lifecycleActs().lifecycleWorkflowEnd(workflowId);
        if (closed) return closed;
        continue;
      }
      await run.handleAborts();
      return null;
    }
  } finally {
    run.ended.clear(); // the ends of workflows superseded before we waited on them
  }
}
