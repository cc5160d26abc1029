// `provision(plan, target)`: the one generic workflow that runs any compiled profile.
// Retries, timeouts, rejoin waits, cancellation with cleanup and crash resumption come
// from Temporal; this code only walks the plan. Deterministic: no I/O, no clocks but
// the workflow's own.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  TimeoutFailure,
  upsertMemo,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { SiteRoutingActivities } from '../activities/site-routing';
import { nodeAgentQueue, ramdiskQueue } from '../core/agent-queues';
import { formatDuration, waitedFor, waitingUntil } from '../core/deadlines';
import { errorCodes } from '../core/errors';
import { labelsMatch } from '../core/label-expr';
import {
  isStepRelay,
  type JsonValue,
  type Plan,
  type PlanStep,
  type ProvisionResult,
  type ProvisionStatus,
  type ProvisionTarget,
  type SiteAgentChoice,
  type StepInput,
  type StepRecord,
} from '../core/plan';
import { activitySummary, provisionDetails } from '../core/workflow-summaries';
import { installConfirmMacHandlers, noteRejectedSignal } from './confirm-mac-handlers';
import { abortSignal, abortUpdate, agentJoinedSignal, statusQuery, stepProgressSignal } from './provision-handles';
import { quorumGate } from './quorum-gate';

const routing = proxyActivities<SiteRoutingActivities>({ startToCloseTimeout: '20 seconds', retry: { maximumAttempts: 10, maximumInterval: '5 seconds' } });

/** How often a step with no connected site agent looks again. */
const NO_AGENT_POLL_MS = 1000;
const MAX_REASON = 512;
/** A wait an activity reports through stepProgress (`not-seen`, `ramdisk not joined after power cycle 2 of 3`, …). */
const MAX_REPORTED_WAIT = 256;

type StepFn = (input: StepInput) => Promise<unknown>;

const NON_RETRYABLE: readonly string[] = ['INVALID_INPUT', 'INVALID_CONFIG', 'UNSUPPORTED', 'NOT_FOUND'];

function activityOptions(
  step: PlanStep,
  taskQueue: string | undefined,
  summary: string,
  scheduleToStartMs: number | undefined,
  nonRetryable: readonly string[],
): ActivityOptions {
  return {
    ...(taskQueue ? { taskQueue } : {}),
    // The Web UI shows it on the activity: the step key, its `use`, the queue or agent it went to.
    summary,
    startToCloseTimeout: step.timeoutMs,
    ...(scheduleToStartMs ? { scheduleToStartTimeout: scheduleToStartMs } : {}),
    ...(step.heartbeatMs ? { heartbeatTimeout: step.heartbeatMs } : {}),
    retry: {
      maximumAttempts: step.retry.maximumAttempts,
      initialInterval: step.retry.initialIntervalMs,
      backoffCoefficient: step.retry.backoffCoefficient,
      maximumInterval: step.retry.maximumIntervalMs,
      nonRetryableErrorTypes: [...nonRetryable],
    },
  };
}

function activityFn(
  step: PlanStep,
  taskQueue: string | undefined,
  summary: string,
  scheduleToStartMs?: number,
  nonRetryable: readonly string[] = NON_RETRYABLE,
): StepFn {
  const proxy = proxyActivities<Record<string, StepFn>>(activityOptions(step, taskQueue, summary, scheduleToStartMs, nonRetryable));
  return proxy[step.activity] as StepFn;
}

const isScheduleToStartTimeout = (err: unknown): boolean =>
  err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;

/** A wait the running step reports itself in its stepProgress (`{ waitingFor, since }`), bounded. */
function reportedWait(progress: unknown): { what: string; since?: string } | null {
  if (typeof progress !== 'object' || progress === null) return null;
  const { waitingFor, since } = progress as { waitingFor?: unknown; since?: unknown };
  if (typeof waitingFor !== 'string' || waitingFor.trim() === '') return null;
  const what = waitingFor.slice(0, MAX_REPORTED_WAIT);
  return typeof since === 'string' && !Number.isNaN(Date.parse(since)) ? { what, since: new Date(since).toISOString() } : { what };
}

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

const message = (err: unknown): string => {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
};

export async function provision(plan: Plan, target: ProvisionTarget): Promise<ProvisionResult> {
  const { workflowId } = workflowInfo();
  const status: ProvisionStatus = {
    phase: 'steps',
    step: null,
    waitingFor: null,
    progress: null,
    history: [],
    abortReason: null,
    confirmedMac: null,
    rejectedSignals: [],
    error: null,
  };
  let joins = 0;
  const outputs: Record<string, JsonValue> = {};
  const main = new CancellationScope();

  // The Web UI's current details follow the status: the step, what it waits for and since
  // when (workflow time), progress.
  let waitingSince: string | null = null;
  let waitReported = false; // the wait came from the step's own stepProgress
  const showDetails = () => setCurrentDetails(provisionDetails(status, waitingSince));
  const waitFor = (what: string | null, since?: string) => {
    status.waitingFor = what;
    waitingSince = what === null ? null : (since ?? new Date().toISOString());
    waitReported = false;
    showDetails();
  };
  // The destructive-batch quorum: destructive steps wait for the run's approved batch, which every step's input then carries.
  const gate = quorumGate(plan, target, workflowId, waitFor);

  const abortProblem = (reason: unknown): string | undefined => {
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > MAX_REASON) return `a reason is 1 to ${MAX_REASON} characters`;
    if (status.abortReason !== null) return `already aborted: ${status.abortReason}`;
    if (status.phase !== 'steps' && status.phase !== 'acceptance')
      return `nothing to abort: the run is ${status.phase === 'cleanup' ? 'cleaning up' : status.phase}`;
    return undefined;
  };
  const abort = (reason: string) => {
    status.abortReason = reason;
    main.cancel();
  };

  setHandler(statusQuery, () => status);
  setHandler(abortSignal, (reason) => {
    const problem = abortProblem(reason);
    if (problem) noteRejectedSignal(status.rejectedSignals, { name: 'abort', reason: problem });
    else abort(reason);
  });
  setHandler(abortUpdate, (reason) => (abort(reason), status), {
    validator: (reason) => {
      const problem = abortProblem(reason);
      if (problem) throw ApplicationFailure.nonRetryable(problem, 'INVALID_STATE');
    },
  });
  installConfirmMacHandlers(target.nodeId, {
    confirmed: (mac) => void (status.confirmedMac = mac),
    rejected: (reason) => noteRejectedSignal(status.rejectedSignals, { name: 'confirmMac', reason }),
  });
  setHandler(agentJoinedSignal, () => {
    joins += 1;
  });
  setHandler(stepProgressSignal, ({ key, progress }) => {
    if (status.step?.key !== key) return;
    status.progress = (progress ?? null) as JsonValue;
    const reported = reportedWait(progress);
    if (reported) {
      waitFor(reported.what, reported.since);
      waitReported = true;
    } else if (waitReported) waitFor(null);
    else showDetails();
  });

  const inputFor = (step: PlanStep, extra: Partial<StepInput> = {}): StepInput => ({
    workflowId,
    stepKey: step.key,
    use: step.use,
    with: step.with,
    target,
    ...(status.confirmedMac && step.await === 'confirmMac' ? { confirmedMac: status.confirmedMac } : {}),
    ...(gate.bundle() ? { quorum: gate.bundle() } : {}),
    ...extra,
  });

  /** Site steps (and control steps relaying through a site agent): route, re-route, or wait for one. */
  async function viaSiteAgent(step: PlanStep, deadline: number): Promise<unknown> {
    const avoid: string[] = [];
    for (;;) {
      const agent: SiteAgentChoice | null = await routing.siteAgentFor({ nodeId: target.nodeId, avoid });
      const left = deadline - Date.now();
      if (!agent) {
        if (left <= 0) {
          throw ApplicationFailure.nonRetryable(
            `${waitedFor(step.timeoutMs, `a connected site agent of site ${target.siteId} to run ${step.use} for node ${target.nodeId}`)}: none is connected`,
            'NO_SITE_AGENT',
          );
        }
        // Name the agents this step was sent to and that never picked it up: the ones to bring back.
        waitFor(`a connected site agent of site ${target.siteId}${avoid.length ? ` (not picked up by ${avoid.join(', ')})` : ''}`, waitingSince ?? undefined);
        await sleep(Math.min(NO_AGENT_POLL_MS, left));
        continue;
      }
      if (status.step) {
        status.step.taskQueue = step.relay ? undefined : agent.taskQueue;
        status.step.attempt += 1;
      }
      waitFor(null);
      try {
        if (step.relay)
          return await activityFn(
            step,
            undefined,
            activitySummary(step.key, step.use, `${workflowInfo().taskQueue} via ${agent.taskQueue}`),
          )(inputFor(step, { siteAgent: agent }));
        const window = Math.max(1000, Math.min(step.scheduleToStartMs ?? left, left));
        return await activityFn(step, agent.taskQueue, activitySummary(step.key, step.use, agent.taskQueue), window)(inputFor(step));
      } catch (err) {
        if (!isScheduleToStartTimeout(err)) throw err;
        // Nobody picked the task up: that agent vanished. Try the next one.
        avoid.push(agent.agentNodeId);
        if (Date.now() >= deadline)
          throw ApplicationFailure.nonRetryable(`site agent ${agent.agentNodeId} did not pick up ${step.use} before its deadline`, 'NO_SITE_AGENT');
      }
    }
  }

  /** A control step's relay: the machine-side activity on the machine's queue, then the control step's second half. */
  async function relay(
    step: PlanStep,
    request: { relayTo: { queue: 'ramdisk' | 'node'; activity: string; with: StepInput['with']; then?: string } },
    deadline: number,
  ): Promise<unknown> {
    const { queue, activity, with: withInput, then } = request.relayTo;
    const taskQueue = queue === 'ramdisk' ? ramdiskQueue(target.nodeId) : nodeAgentQueue(target.nodeId);
    const left = Math.max(1000, deadline - Date.now());
    // The machine's answer, any error code included, is final (the control step decides what
    // follows). An attempt that timed out is tried once more: the queue is per node, not per
    // boot, so a powered-off ramdisk's long poll, still open at the server for up to a minute,
    // can take the next ramdisk's first task and never answer it.
    const machineStep: PlanStep = { ...step, activity, timeoutMs: left, retry: { ...step.retry, maximumAttempts: 2 } };
    if (status.step) status.step.taskQueue = taskQueue;
    showDetails();
    const answer = await activityFn(
      machineStep,
      taskQueue,
      activitySummary(step.key, activity, taskQueue),
      left,
      errorCodes,
    )({ ...inputFor(step), use: activity, with: withInput });
    if (!then) return answer;
    if (status.step) status.step.taskQueue = workflowInfo().taskQueue;
    showDetails();
    return activityFn(
      { ...step, activity: then },
      undefined,
      activitySummary(step.key, then, workflowInfo().taskQueue),
    )({ ...inputFor(step), relayResult: (answer ?? null) as JsonValue });
  }

  async function execute(step: PlanStep): Promise<unknown> {
    const started = Date.now();
    const deadline = started + step.timeoutMs;
    status.step = { key: step.key, use: step.use, queue: step.queue, attempt: 0, startedAt: new Date(started).toISOString() };
    status.progress = null;
    upsertMemo({ step: step.key, use: step.use });
    showDetails();
    if (step.await === 'confirmMac' && status.confirmedMac === null) {
      waitFor(waitingUntil(`confirmMac (an operator confirms node ${target.nodeId}’s MAC)`, deadline));
      if (!(await condition(() => status.confirmedMac !== null, step.timeoutMs))) {
        throw ApplicationFailure.nonRetryable(
          `${waitedFor(step.timeoutMs, `an operator to confirm node ${target.nodeId}’s MAC (confirmMac)`)}: no MAC was confirmed`,
          'INVALID_STATE',
        );
      }
      waitFor(null);
    }
    const joinsBefore = joins;
    let result: unknown;
    if (step.route === 'site-agent' || step.relay) result = await viaSiteAgent(step, deadline);
    else {
      const queue = step.route === 'ramdisk' ? ramdiskQueue(target.nodeId) : step.route === 'node' ? nodeAgentQueue(target.nodeId) : undefined;
      if (status.step) {
        status.step.taskQueue = queue ?? workflowInfo().taskQueue;
        status.step.attempt = 1;
      }
      showDetails();
      result = await activityFn(step, queue, activitySummary(step.key, step.use, queue ?? workflowInfo().taskQueue), step.scheduleToStartMs)(inputFor(step));
      if (step.route === 'control' && isStepRelay(result)) result = await relay(step, result, deadline);
    }
    if (step.await === 'rejoin') {
      waitFor(waitingUntil(`agentJoined (the next agent of node ${target.nodeId} joins after ${step.use})`, deadline));
      const left = Math.max(0, deadline - Date.now());
      if (!(await condition(() => joins > joinsBefore, left))) {
        const what = `the next agent of node ${target.nodeId} to join after ${step.use} (agentJoined)`;
        throw ApplicationFailure.nonRetryable(
          `${waitedFor(Date.now() - started, what)}: the machine did not rejoin within ${step.timeoutMs} ms of ${step.use}`,
          'DRIVER_ERROR',
          {
            nodeId: target.nodeId,
            step: step.key,
            reason: 'join-deadline',
          },
        );
      }
      waitFor(null);
    }
    return result;
  }

  const record = (step: PlanStep, outcome: StepRecord['outcome'], err?: unknown) =>
    status.history.push({ key: step.key, use: step.use, outcome, ...(err ? { error: message(err) } : {}) });

  async function runStep(step: PlanStep): Promise<void> {
    if (!labelsMatch(step.when, target.labels)) return void record(step, 'skipped');
    const started = Date.now();
    const explained = (err: unknown, which: PlanStep) =>
      explainTimeout(err, which, target.nodeId, status.waitingFor, status.step?.taskQueue, Date.now() - started);
    try {
      if (!(await gate.before(step, status.phase === 'cleanup'))) return void record(step, 'skipped');
      const output = await execute(step);
      if (output !== undefined) outputs[step.key] = output as JsonValue;
      record(step, 'succeeded');
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
          await execute(step.fallback);
          record(step.fallback, 'fallback');
          return;
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
      waitFor(null);
    }
  }

  let failure: unknown;
  try {
    await main.run(async () => {
      await gate.start();
      for (const step of plan.steps) await runStep(step);
      status.phase = 'acceptance';
      showDetails();
      for (const step of plan.acceptance) await runStep(step);
    });
  } catch (err) {
    failure = err;
  }

  // Cleanup runs whatever happened, and cannot be cancelled: boot entries and tokens
  // never outlive their workflow.
  status.phase = 'cleanup';
  showDetails();
  await CancellationScope.nonCancellable(async () => {
    for (const step of plan.cleanup) {
      try {
        await runStep(step);
      } catch {
        // recorded in the history; the other cleanup steps still run
      }
    }
  });
  status.step = null;
  upsertMemo({ step: null, use: null });

  if (failure !== undefined) {
    status.error = status.abortReason ?? message(failure);
    status.phase = status.abortReason === null && isCancellation(failure) ? 'cancelled' : 'failed';
    showDetails();
    if (status.abortReason !== null) throw ApplicationFailure.nonRetryable(`aborted: ${status.abortReason}`, 'ABORTED');
    if (isCancellation(failure)) throw failure;
    if (failure instanceof ActivityFailure && failure.cause instanceof ApplicationFailure) throw failure.cause;
    throw failure;
  }
  status.phase = 'succeeded';
  showDetails();
  return { outcome: 'succeeded', history: status.history, outputs };
}
