// One plan step, start to end: its `when` label gate, the quorum gate, the confirmMac wait
// before it, where it runs (an activity on its queue, routing.ts, or the workflow itself,
// workflow-steps.ts), the rejoin wait after it, its fallback and onFailure, and a timeout
// explained in words (what it waited for, for how long).
import { ActivityFailure, ApplicationFailure, condition, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import { formatDuration, waitedFor, waitingUntil } from '../../core/deadlines';
import { labelsMatch } from '../../core/label-expr';
import { isStepRelay, type PlanStep, type StepRecord } from '../../core/plan';
import { activitySummary } from '../../core/workflow-summaries';
import { awaitJoin, connectionBefore, openedSince } from './join-wait';
import { resendingLostTask } from './lost-task';
import { relay } from './relay';
import { activityOn, controlQueue, machineQueue, viaSiteAgent } from './routing';
import { stepInput, type RunContext } from './run-context';
import { showStepInMemo } from './step-memo';
import { runWorkflowStep, workflowSteps } from './workflow-steps';

const timeoutTexts: Record<string, string> = {
  START_TO_CLOSE: 'the step’s timeout ran out',
  SCHEDULE_TO_CLOSE: 'the step’s timeout ran out',
  SCHEDULE_TO_START: 'no agent picked the step up',
  HEARTBEAT: 'its agent stopped heartbeating',
};

/**
 * Temporal's own timeout says nothing of what the step waited for: the failure (and the node's
 * lastError) names the wait, the node and how long, e.g. "waited 20m for the ramdisk of node X
 * to join … : the step’s timeout ran out".
 */
function explainTimeout(err: unknown, step: PlanStep, nodeId: string, waiting: string | null, taskQueue: string | undefined, waitedMs: number): unknown {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof TimeoutFailure)) return err;
  const what = waiting ? waiting.replace(/ \(until [^)]*\)$/, '') : `${step.use} on ${taskQueue ?? 'its queue'} to answer for node ${nodeId}`;
  const why = timeoutTexts[String(err.cause.timeoutType)] ?? 'a timeout ran out';
  return ApplicationFailure.nonRetryable(
    `${waitedFor(waitedMs, what)}: ${why} (${step.key} ${step.use}, timeout ${formatDuration(step.timeoutMs)} per attempt)`,
    'DRIVER_ERROR',
    { nodeId, step: step.key, reason: 'step-deadline' },
  );
}

export const failureMessage = (err: unknown): string => {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
};

/**
 * The step's own work, wherever it runs; answers its output. Not async: each route answers its
 * work's own promise, without the two more an async wrapper makes (the SDK's stack-trace hook
 * pays for every promise, sdk-typescript#1587).
 */
function dispatch(ctx: RunContext, step: PlanStep, deadline: number): Promise<unknown> {
  const { status } = ctx.run;
  // Route `workflow` (the registry's workflow steps); by `use` for plans compiled before the route existed.
  const workflowStep = workflowSteps.get(step.use);
  if (workflowStep) return runWorkflowStep(ctx, step, workflowStep);
  if (step.route === 'workflow')
    return Promise.reject(ApplicationFailure.nonRetryable(`${step.key}: ${step.use} is not a step this workflow runs`, 'UNSUPPORTED'));
  if (step.route === 'site-agent') {
    return resendingLostTask(step, () =>
      viaSiteAgent(
        ctx.target,
        ctx.run,
        {
          use: step.use,
          timeoutMs: step.timeoutMs,
          scheduleToStartMs: step.scheduleToStartMs,
          send: (agent, window) => {
            if (status.step) {
              status.step.taskQueue = agent.taskQueue;
              status.step.attempt += 1;
            }
            ctx.run.waitFor(null);
            return activityOn(step, agent.taskQueue, activitySummary(step.key, step.use, agent.taskQueue), window)(stepInput(ctx, step));
          },
        },
        deadline,
      ),
    );
  }
  const queue = machineQueue(step.route, ctx);
  // A step on the machine's own agent (undefined: the control plane's queue) can ask that agent what became of it.
  const onMachine = (machine: string | undefined) =>
    resendingLostTask(step, () => send(ctx, step, machine, deadline), machine ? { queue: machine, deadline, waitFor: ctx.run.waitFor } : undefined);
  return queue instanceof Promise ? queue.then(onMachine) : onMachine(queue);
}

/** A step's activity on `queue` (undefined: the control-plane queue), and a control step's relay. */
function send(ctx: RunContext, step: PlanStep, queue: string | undefined, deadline: number): Promise<unknown> {
  const { status } = ctx.run;
  if (status.step) {
    status.step.taskQueue = queue ?? controlQueue();
    status.step.attempt = 1;
  }
  ctx.run.showDetails();
  const work = activityOn(step, queue, activitySummary(step.key, step.use, queue ?? controlQueue()), step.scheduleToStartMs)(stepInput(ctx, step));
  if (step.route !== 'control') return work;
  return work.then((result) => (isStepRelay(result) ? relay(ctx, step, result, deadline) : result));
}

/** A step's status, then its work with the waits around it; answers its output. */
function execute(ctx: RunContext, step: PlanStep): Promise<unknown> {
  const { run } = ctx;
  const { status } = run;
  const started = Date.now();
  const deadline = started + step.timeoutMs;
  status.step = { key: step.key, use: step.use, queue: step.queue, attempt: 0, startedAt: new Date(started).toISOString() };
  status.progress = null;
  showStepInMemo(step);
  run.showDetails();
  const awaitsMac = step.await === 'confirmMac' && status.confirmedMac === null;
  // Most steps wait for nothing before or after their work: the work's promise is the step's,
  // with no await (each one a promise more for the SDK's stack-trace hook, sdk-typescript#1587).
  if (!awaitsMac && step.await !== 'rejoin') return dispatch(ctx, step, deadline);
  return dispatchWithWaits(ctx, step, { awaitsMac, started, deadline });
}

/** The step's work after its confirmMac wait (when awaitsMac) and before its rejoin wait (when it awaits one). */
async function dispatchWithWaits(
  ctx: RunContext,
  step: PlanStep,
  { awaitsMac, started, deadline }: { awaitsMac: boolean; started: number; deadline: number },
): Promise<unknown> {
  const { run, target } = ctx;
  const { status } = run;
  if (awaitsMac) {
    run.waitFor(waitingUntil(`confirmMac (an operator confirms node ${target.nodeId}’s MAC)`, deadline));
    if (!(await condition(() => status.confirmedMac !== null, step.timeoutMs))) {
      throw ApplicationFailure.nonRetryable(
        `${waitedFor(step.timeoutMs, `an operator to confirm node ${target.nodeId}’s MAC (confirmMac)`)}: no MAC was confirmed`,
        'INVALID_STATE',
      );
    }
    run.waitFor(null);
  }
  const joinsBefore = run.joins();
  // Read before the step: its agent may be back before the step's answer.
  const before = step.await === 'rejoin' ? await connectionBefore(ctx) : undefined;
  const result = await dispatch(ctx, step, deadline);
  if (step.await === 'rejoin') {
    run.waitFor(waitingUntil(`agentJoined (the next agent of node ${target.nodeId} joins after ${step.use})`, deadline));
    if (!(await awaitJoin(ctx, { arrived: () => run.joins() > joinsBefore, isNew: openedSince(before ?? null), deadline }, before !== undefined))) {
      const what = `the next agent of node ${target.nodeId} to join after ${step.use} (agentJoined)`;
      throw ApplicationFailure.nonRetryable(
        `${waitedFor(Date.now() - started, what)}: the machine did not rejoin within ${step.timeoutMs} ms of ${step.use}`,
        'DRIVER_ERROR',
        { nodeId: target.nodeId, step: step.key, reason: 'join-deadline' },
      );
    }
    run.waitFor(null);
  }
  return result;
}

/**
 * Runs one step and records its outcome in the status' history; answers its output (undefined
 * when skipped or it had none). A failure it does not continue past is thrown.
 */
export async function runStep(ctx: RunContext, step: PlanStep): Promise<unknown> {
  const { run, target } = ctx;
  const { status } = run;
  const record = (which: PlanStep, outcome: StepRecord['outcome'], err?: unknown) =>
    status.history.push({ key: which.key, use: which.use, outcome, ...(err ? { error: failureMessage(err) } : {}) });
  if (!labelsMatch(step.when, target.labels)) return void record(step, 'skipped');
  const started = Date.now();
  const explained = (err: unknown, which: PlanStep) =>
    explainTimeout(err, which, target.nodeId, status.waitingFor, status.step?.taskQueue, Date.now() - started);
  try {
    // A boolean when the gate has nothing to wait for: no await, no promise.
    const allowed = ctx.gate.before(step, status.phase === 'cleanup');
    if (!(typeof allowed === 'boolean' ? allowed : await allowed)) return void record(step, 'skipped');
    const output = await execute(ctx, step);
    record(step, 'succeeded');
    return output;
  } catch (thrown) {
    const err = explained(thrown, step);
    if (isCancellation(err)) {
      record(step, 'cancelled');
      throw err;
    }
    let failure = err;
    if (step.fallback) {
      record(step, 'failed', err);
      try {
        await execute(ctx, step.fallback);
        record(step.fallback, 'fallback');
        return undefined;
      } catch (fallbackThrown) {
        const fallbackErr = explained(fallbackThrown, step.fallback);
        if (isCancellation(fallbackErr)) throw fallbackErr;
        failure = fallbackErr;
        record(step.fallback, 'failed', fallbackErr);
      }
    }
    if (step.onFailure === 'continue') return void record(step.fallback ?? step, 'continued', failure);
    if (!step.fallback) record(step, 'failed', failure);
    throw failure;
  } finally {
    run.waitFor(null);
  }
}
