// A step of one attempt whose task Temporal handed out but its worker never got (an agent's
// poll gave up as the task was handed out, or Temporal's store timed out meanwhile: Temporal
// records it started either way) times out with no beat recorded, since agents and the
// control plane beat such a step as it starts (core/step-started.ts). Nothing ran, so the
// step is sent again, once. Versioned with a patch (../patches.ts): a run that failed such a
// step before replays as it ran.
import { ActivityFailure, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { PlanStep } from '../../core/plan';
import { takesPatch } from '../patches';

/** Whether the attempt timed out with no beat of its agent recorded: the agent never started it. */
export function neverStarted(err: unknown): boolean {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof TimeoutFailure)) return false;
  const { timeoutType, lastHeartbeatDetails } = err.cause;
  return (timeoutType === TimeoutType.HEARTBEAT || timeoutType === TimeoutType.START_TO_CLOSE) && lastHeartbeatDetails == null;
}

/** `send`, and once more if its only attempt's task never reached its worker; a step with retries is Temporal's to retry. */
export function resendingLostTask(step: PlanStep, send: () => Promise<unknown>): Promise<unknown> {
  // Only a step with a heartbeat timeout beats as it starts (a plan compiled before every agent step had one, say).
  if (step.retry.maximumAttempts !== 1 || !step.heartbeatMs || step.route === 'workflow') return send();
  return send().catch((err: unknown) => {
    if (!neverStarted(err) || !takesPatch('resend-lost-agent-task')) throw err;
    return send();
  });
}
