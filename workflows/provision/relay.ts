// A control step's relay (core/plan.ts StepRelay): the machine-side activity on the
// machine's queue, then the control step's second half with the machine's answer.
import type { JsonValue, PlanStep, StepRelay } from '../../core/plan';
import { errorCodes } from '../../core/errors';
import { activitySummary } from '../../core/workflow-summaries';
import { activityOn, controlQueue, machineQueue } from './routing';
import { stepInput, type RunContext } from './run-context';

export async function relay(ctx: RunContext, step: PlanStep, request: StepRelay, deadline: number): Promise<unknown> {
  const { status } = ctx.run;
  const { queue, activity, with: withInput, then } = request.relayTo;
  const taskQueue = await machineQueue(queue, ctx);
  const left = Math.max(1000, deadline - Date.now());
  // The machine's answer, any error code included, is final (the control step decides what
  // follows). An attempt that timed out (its ramdisk stalled past its heartbeat) is tried once
  // more on the same ramdisk's queue, within the step's time.
  const machineStep = { ...step, activity, timeoutMs: left, retry: { ...step.retry, maximumAttempts: 2 } };
  if (status.step) status.step.taskQueue = taskQueue;
  ctx.run.showDetails();
  const answer = await activityOn(
    machineStep,
    taskQueue,
    activitySummary(step.key, activity, taskQueue ?? controlQueue()),
    left,
    errorCodes,
  )({
    ...stepInput(ctx, step),
    use: activity,
    with: withInput,
  });
  if (!then) return answer;
  if (status.step) status.step.taskQueue = controlQueue();
  ctx.run.showDetails();
  return activityOn(
    { ...step, activity: then },
    undefined,
    activitySummary(step.key, then, controlQueue()),
  )({
    ...stepInput(ctx, step),
    relayResult: (answer ?? null) as JsonValue,
  });
}
