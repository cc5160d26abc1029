// Where a step's work goes: the control-plane queue, the machine's own queues (its ramdisk's,
// ramdisk-queue.ts, or node.<node>), or a connected site agent of the machine's site, picked by
// siteAgentFor and re-picked when the one chosen never picks the task up.
import { ActivityFailure, ApplicationFailure, proxyActivities, sleep, TimeoutFailure, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { SiteRoutingActivities } from '../../activities/site-routing';
import { nodeAgentQueue } from '../../core/agent-queues';
import { waitedFor } from '../../core/deadlines';
import { nonRetryableCodes } from '../../core/errors';
import type { JsonObject, PlanRetry, PlanStep, ProvisionTarget, SiteAgentChoice, StepInput } from '../../core/plan';
import { activitySummary } from '../../core/workflow-summaries';
import { localBookkeeping } from '../local-bookkeeping';
import { ramdiskTaskQueue } from './ramdisk-queue';
import { stepInput, type RunContext } from './run-context';
import type { RunStatus } from './status';

/** Picking an agent reads two rows: a local activity since 2026-12-03, a marker instead of a task and a workflow task more per site command (../local-bookkeeping.ts). */
const routing = localBookkeeping<SiteRoutingActivities>('provision-local-site-routing', {
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 10, maximumInterval: '5 seconds' },
});

/** How often a step with no connected site agent looks again. */
const NO_AGENT_POLL_MS = 1000;

export type StepFn = (input: StepInput) => Promise<unknown>;

/** What an activity needs of a step: its timeout, heartbeat and retry policy. */
export type ActivityShape = Pick<PlanStep, 'activity' | 'timeoutMs' | 'heartbeatMs' | 'retry'>;

/** The activity `shape.activity` on `taskQueue` (the control queue when none), as the Web UI shows it: `summary`. */
export function activityOn(
  shape: ActivityShape,
  taskQueue: string | undefined,
  summary: string,
  scheduleToStartMs?: number,
  nonRetryable: readonly string[] = nonRetryableCodes,
): StepFn {
  const options: ActivityOptions = {
    ...(taskQueue ? { taskQueue } : {}),
    summary,
    startToCloseTimeout: shape.timeoutMs,
    ...(scheduleToStartMs ? { scheduleToStartTimeout: scheduleToStartMs } : {}),
    ...(shape.heartbeatMs ? { heartbeatTimeout: shape.heartbeatMs } : {}),
    retry: {
      maximumAttempts: shape.retry.maximumAttempts,
      initialInterval: shape.retry.initialIntervalMs,
      backoffCoefficient: shape.retry.backoffCoefficient,
      maximumInterval: shape.retry.maximumIntervalMs,
      nonRetryableErrorTypes: [...nonRetryable],
    },
  };
  return proxyActivities<Record<string, StepFn>>(options)[shape.activity] as StepFn;
}

export const isScheduleToStartTimeout = (err: unknown): boolean =>
  err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;

/**
 * The queue of a step's route on the machine, undefined for the control-plane queue. A promise
 * only while the run has yet to learn its ramdisk's queue: most steps make no promise more
 * (the SDK's stack-trace hook pays for each, sdk-typescript#1587).
 */
export function machineQueue(route: PlanStep['route'], ctx: RunContext): string | undefined | Promise<string> {
  if (route === 'ramdisk') return ctx.run.ramdiskQueue() ?? ramdiskTaskQueue(ctx);
  if (route === 'node') return nodeAgentQueue(ctx.target.nodeId);
  return undefined;
}

export const controlQueue = (): string => workflowInfo().taskQueue;

export interface SiteSend<T> {
  /** What the work is, for the waits and failures: `power.setPower`. */
  use: string;
  /** The time the whole step has (the no-agent failure says it waited this long). */
  timeoutMs: number;
  /** How long a task may wait for the picked agent before it is re-routed (capped by what is left). */
  scheduleToStartMs?: number;
  /** Sends the work to the picked agent, with the pick-up window to give its task. */
  send(agent: SiteAgentChoice, scheduleToStartMs: number): Promise<T>;
}

/**
 * Runs `work` on a connected site agent of the machine's site: waits for one (saying so in
 * the status) until `deadline`, and tries the next one when the picked agent does not pick
 * the task up in time (that agent vanished).
 */
export async function viaSiteAgent<T>(target: ProvisionTarget, run: RunStatus, work: SiteSend<T>, deadline: number): Promise<T> {
  const avoid: string[] = [];
  for (;;) {
    const agent = await routing().siteAgentFor({ nodeId: target.nodeId, avoid });
    const left = deadline - Date.now();
    if (!agent) {
      if (left <= 0) {
        throw ApplicationFailure.nonRetryable(
          `${waitedFor(work.timeoutMs, `a connected site agent of site ${target.siteId} to run ${work.use} for node ${target.nodeId}`)}: none is connected`,
          'NO_SITE_AGENT',
        );
      }
      // Name the agents this step was sent to and that never picked it up: the ones to bring back.
      run.waitFor(
        `a connected site agent of site ${target.siteId}${avoid.length ? ` (not picked up by ${avoid.join(', ')})` : ''}`,
        run.waitingSince() ?? undefined,
      );
      await sleep(Math.min(NO_AGENT_POLL_MS, left));
      continue;
    }
    try {
      return await work.send(agent, Math.max(1000, Math.min(work.scheduleToStartMs ?? left, left)));
    } catch (err) {
      if (!isScheduleToStartTimeout(err)) throw err;
      avoid.push(agent.agentNodeId);
      if (Date.now() >= deadline)
        throw ApplicationFailure.nonRetryable(`site agent ${agent.agentNodeId} did not pick up ${work.use} before its deadline`, 'NO_SITE_AGENT');
    }
  }
}

/** Commands a workflow step sends a site agent: a BMC answer takes seconds; the agent heartbeats every second while it works. */
const COMMAND_TIMEOUT_MS = 120_000;
const COMMAND_HEARTBEAT_MS = 10_000;
/** How long a command waits for the picked agent before it is re-routed. */
const COMMAND_PICKUP_MS = 30_000;

export const commandRetry = (maximumAttempts: number): PlanRetry => ({
  maximumAttempts,
  initialIntervalMs: 1000,
  backoffCoefficient: 2,
  maximumIntervalMs: 10_000,
});

/**
 * One command of a workflow-run step (boot.prepareRamdisk, power.setPower …) on a connected
 * site agent, under the step's key (or `stepKey`): its BMC operation id
 * (<workflow>/<step key>/<command>) is the same on a retry or another agent, so the agents'
 * shared ledger never lets it be sent twice. Answers the agent's answer and which agent ran it.
 */
export function siteCommand(
  ctx: RunContext,
  step: PlanStep,
  deadline: number,
  command: { use: string; with: JsonObject; stepKey?: string; nonRetryable?: readonly string[] },
): Promise<{ answer: unknown; agent: SiteAgentChoice }> {
  const { run } = ctx;
  return viaSiteAgent(
    ctx.target,
    run,
    {
      use: command.use,
      timeoutMs: step.timeoutMs,
      scheduleToStartMs: COMMAND_PICKUP_MS,
      send: async (agent, window) => {
        if (run.status.step) run.status.step.taskQueue = agent.taskQueue;
        run.showDetails();
        const left = Math.max(1000, deadline - Date.now());
        const answer = await activityOn(
          { activity: command.use, timeoutMs: Math.min(COMMAND_TIMEOUT_MS, left), heartbeatMs: COMMAND_HEARTBEAT_MS, retry: commandRetry(3) },
          agent.taskQueue,
          activitySummary(step.key, command.use, agent.taskQueue),
          window,
          command.nonRetryable,
        )({ ...stepInput(ctx, step), stepKey: command.stepKey ?? step.key, use: command.use, with: command.with });
        return { answer, agent };
      },
    },
    deadline,
  );
}
