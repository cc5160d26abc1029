// A step of one attempt whose task Temporal handed out but its worker never got (an agent's
// poll gave up as the task was handed out, or Temporal's store timed out meanwhile: Temporal
// records it started either way) times out with no beat recorded, since agents and the
// control plane beat such a step as it starts (core/step-started.ts). Nothing ran, so the
// step is sent again, once.
//
// One whose machine agent beat that it started and then timed out ran, and its answer may be
// what was lost: the workflow asks the agent what became of it (core/step-outcome.ts) and goes
// on with the answer it kept, waits while the agent says it is still at work (up to the step's
// deadline), and fails the step as before when the agent is gone or knows nothing of it.
// Both are versioned with patches (../patches.ts): a run that failed such a step before
// replays as it ran.
import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities, sleep, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { PlanStep } from '../../core/plan';
import { parseStepOutcome, STEP_OUTCOME_ACTIVITY, type StepOutcomeQuery } from '../../core/step-outcome';
import { takesPatch } from '../patches';

/** How long the agent has to pick the question up: a live agent polls its queue all the time. */
const ASK_PICKUP = '15 seconds';
/** How often a step its agent says is still at work is asked about again. */
const STILL_RUNNING_RECHECK_MS = 5_000;

/** The attempt's timeout when it timed out waiting on its worker (a heartbeat or its start-to-close), else undefined. */
function attemptTimeout(err: unknown): TimeoutFailure | undefined {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof TimeoutFailure)) return undefined;
  const { timeoutType } = err.cause;
  return timeoutType === TimeoutType.HEARTBEAT || timeoutType === TimeoutType.START_TO_CLOSE ? err.cause : undefined;
}

/** Whether the attempt timed out with no beat of its agent recorded: the agent never started it. */
function neverStarted(err: unknown): boolean {
  const timeout = attemptTimeout(err);
  return timeout !== undefined && timeout.lastHeartbeatDetails == null;
}

/** Whether the attempt timed out after its agent beat that it started: the step ran, and its answer may be what was lost. */
function startedThenTimedOut(err: unknown): err is ActivityFailure & { activityId: string } {
  const timeout = attemptTimeout(err);
  return timeout !== undefined && timeout.lastHeartbeatDetails != null && Boolean((err as ActivityFailure).activityId);
}

/** Where a machine step ran and until when it may take: its agent can be asked what became of it. */
export interface AskableAgent {
  queue: string;
  deadline: number;
  /** Shows what the run waits for (RunStatus.waitFor). */
  waitFor(what: string | null): void;
}

/**
 * `send`, and once more if its only attempt's task never reached its worker; a step with
 * retries is Temporal's to retry. With `agent` (a step on the machine's own agent), a step that
 * timed out after its agent started it is asked about instead of failed.
 */
export function resendingLostTask(step: PlanStep, send: () => Promise<unknown>, agent?: AskableAgent): Promise<unknown> {
  // Only a step with a heartbeat timeout beats as it starts (a plan compiled before every agent step had one, say).
  if (step.retry.maximumAttempts !== 1 || !step.heartbeatMs || step.route === 'workflow') return send();
  const askedAbout = (err: unknown): Promise<unknown> => {
    if (agent && startedThenTimedOut(err) && takesPatch('ask-agent-step-outcome')) return askWhatBecameOf(step, agent, err);
    throw err;
  };
  return send().catch((err: unknown) => (neverStarted(err) && takesPatch('resend-lost-agent-task') ? send().catch(askedAbout) : askedAbout(err)));
}

/** The step's output as its agent kept it, its failure, or `timedOut` itself when the agent cannot say (or is still at work past the step's deadline). */
async function askWhatBecameOf(step: PlanStep, agent: AskableAgent, timedOut: ActivityFailure & { activityId: string }): Promise<unknown> {
  const ask = proxyActivities<Record<string, (query: StepOutcomeQuery) => Promise<unknown>>>({
    taskQueue: agent.queue,
    summary: `asks ${agent.queue} what became of ${step.key} ${step.use}, which timed out after it started`,
    scheduleToStartTimeout: ASK_PICKUP,
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
  })[STEP_OUTCOME_ACTIVITY] as (query: StepOutcomeQuery) => Promise<unknown>;
  agent.waitFor(`${agent.queue} to say what became of ${step.key} ${step.use} (its attempt timed out after it started)`);
  try {
    for (;;) {
      let answer: unknown;
      try {
        answer = await ask({ activityId: timedOut.activityId });
      } catch (error) {
        if (isCancellation(error)) throw error; // the run was cancelled (aborted) while it asked
        throw timedOut; // the agent is gone (or older than the question): the step fails as its timeout says
      }
      const outcome = parseStepOutcome(answer);
      if ('problem' in outcome)
        throw ApplicationFailure.nonRetryable(
          `${agent.queue} answered what became of ${step.key} ${step.use} with no outcome (${outcome.problem}); the step's attempt had timed out after it started`,
          'DRIVER_ERROR',
        );
      if (outcome.state === 'succeeded') return outcome.output;
      if (outcome.state === 'failed') throw ApplicationFailure.nonRetryable(outcome.message, outcome.type ?? 'DRIVER_ERROR');
      const left = agent.deadline - Date.now();
      if (outcome.state === 'unknown' || left <= 0) throw timedOut;
      await sleep(Math.min(STILL_RUNNING_RECHECK_MS, left));
    }
  } finally {
    // Cleared before the failure is explained: it names what the step waited for (step-runner.ts).
    agent.waitFor(null);
  }
}
