// Steps the workflow runs itself (route `workflow`: no activity, no worker serves them):
// metal.ensureRamdisk, wait.agentJoined and media.insert. Each attempt has the step's timeout; a failure
// is retried as the step's retry policy and the one retry rule (core/errors.ts) say.
import { ActivityFailure, ApplicationFailure, condition, isCancellation, sleep } from '@temporalio/workflow';
import { waitedFor, waitingUntil } from '../../core/deadlines';
import { retryable } from '../../core/errors';
import type { PlanStep } from '../../core/plan';
import type { StepsOf } from '../../core/steps/builtin';
import { ensureRamdisk } from './ensure-ramdisk';
import { awaitJoin, connectionBefore, openedSince } from './join-wait';
import { mediaInsert } from './media-insert';
import type { RunContext } from './run-context';
import { controlQueue } from './routing';

export interface WorkflowStepAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** When this attempt's time (the step's timeout) runs out (workflow time). */
  deadline: number;
}

type WorkflowStep = (ctx: RunContext, step: PlanStep, attempt: WorkflowStepAttempt) => Promise<unknown>;

/**
 * wait.agentJoined: the next agentJoined signal of the role that no earlier wait of this run
 * took (the join path sends it when the machine's ramdisk or node agent joins, or when a node
 * agent's session opens again).
 */
async function waitAgentJoined(ctx: RunContext, step: PlanStep, { deadline }: WorkflowStepAttempt): Promise<{ agentNodeId: string; role: string }> {
  const role = step.with.role === 'ramdisk' ? 'ramdisk' : 'node';
  const { run, target } = ctx;
  const started = Date.now();
  const what = `the ${role} agent of node ${target.nodeId} to join`;
  run.waitFor(waitingUntil(`agentJoined (${what})`, deadline));
  const before = await connectionBefore(ctx);
  if (!(await awaitJoin(ctx, { arrived: () => run.untakenJoins(role) > 0, isNew: openedSince(before ?? null, role), deadline }, before !== undefined))) {
    throw ApplicationFailure.create({
      message: `${waitedFor(Date.now() - started, what)}: none joined`,
      type: 'DRIVER_ERROR',
      nonRetryable: true,
      details: [{ nodeId: target.nodeId, role, reason: 'join-deadline' }],
    });
  }
  run.takeJoins(role);
  run.waitFor(null);
  return { agentNodeId: run.lastJoined(role) ?? target.nodeId, role };
}

/** The steps the workflow runs itself, by `use`: typed by the registry's `workflow` steps, so one missing or extra does not compile. */
const implementations: Record<StepsOf<'workflow'>, WorkflowStep> = {
  'metal.ensureRamdisk': ensureRamdisk,
  'wait.agentJoined': waitAgentJoined,
  'media.insert': mediaInsert,
};
export const workflowSteps: ReadonlyMap<string, WorkflowStep> = new Map(Object.entries(implementations));

/** The failure's own verdict, then the one retry rule on its code; a timeout or an unknown error is retried. */
function shouldRetry(err: unknown): boolean {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  if (failure instanceof ApplicationFailure) return !failure.nonRetryable && retryable(failure.type ?? 'INTERNAL');
  return true;
}

const backoffMs = (step: PlanStep, attempt: number): number =>
  Math.min(step.retry.maximumIntervalMs, step.retry.initialIntervalMs * step.retry.backoffCoefficient ** (attempt - 1));

/** Runs a workflow-run step with its retries; answers its output. */
export async function runWorkflowStep(ctx: RunContext, step: PlanStep, implementation: WorkflowStep): Promise<unknown> {
  const { status } = ctx.run;
  for (let attempt = 1; ; attempt++) {
    if (status.step) {
      status.step.taskQueue = controlQueue();
      status.step.attempt = attempt;
    }
    ctx.run.showDetails();
    try {
      return await implementation(ctx, step, { attempt, deadline: Date.now() + step.timeoutMs });
    } catch (err) {
      if (isCancellation(err) || attempt >= step.retry.maximumAttempts || !shouldRetry(err)) throw err;
      ctx.run.waitFor(null);
      await sleep(backoffMs(step, attempt));
    }
  }
}
