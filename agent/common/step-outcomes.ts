// An agent's memory of its recent steps of one attempt, so the workflow that sent one can ask
// what became of it when its answer never reached Temporal (core/step-outcome.ts). Kept in
// memory only: an agent that restarted knows nothing of the steps before, which is the truth
// (the workflow then fails the step, as it would have without asking). Bounded by count and by
// bytes: an output too large to keep is not kept, and the run asking about it learns nothing,
// as from an agent that restarted.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { RecentCache } from '../../core/recent-cache';
import { beatsAsItStarts } from '../../core/step-started';
import { STEP_OUTCOME_ACTIVITY, type StepOutcome, type StepOutcomeQuery } from '../../core/step-outcome';
import type { AgentActivity } from './restricted-worker';

/** Outcomes kept: a machine's agent runs its steps one after another, a site agent a few hundred at once. */
export const STEP_OUTCOMES_KEPT = 1024;
/** Their outputs' and messages' bytes kept in all, as JSON: a DCGM report is tens of KiB. */
export const STEP_OUTCOME_BYTES_KEPT = 16 * 1024 * 1024;
/** What an outcome with no output or message weighs: its key and state. */
const OUTCOME_OVERHEAD_BYTES = 256;

/** An outcome's weight in bytes: its output as JSON (what Temporal would carry), or its message; an output JSON cannot carry is never kept. */
export function outcomeBytes(outcome: StepOutcome): number {
  if (outcome.state === 'failed') return OUTCOME_OVERHEAD_BYTES + Buffer.byteLength(outcome.message);
  if (outcome.state !== 'succeeded') return OUTCOME_OVERHEAD_BYTES;
  try {
    return OUTCOME_OVERHEAD_BYTES + Buffer.byteLength(JSON.stringify(outcome.output) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** A step's key among the outcomes: the run that sent it and its activity id (undefined outside a workflow's activity). */
const keyOf = ({ workflowExecution: run }: Context['info'], activityId: string): string | undefined =>
  run ? `${run.workflowId}/${run.runId}/${activityId}` : undefined;

function failureOf(error: unknown): StepOutcome {
  if (error instanceof ApplicationFailure) return { state: 'failed', type: error.type ?? null, message: error.message };
  // The SDK stops a step whose beat Temporal answers NOT_FOUND: its attempt had timed out (the
  // only time a run asks), so the work was cut short.
  if (error instanceof CancelledFailure)
    return { state: 'failed', type: null, message: `the agent stopped the step when Temporal no longer held its attempt (${error.message})` };
  return { state: 'failed', type: null, message: error instanceof Error ? error.message : String(error) };
}

/**
 * `activities` with each one's outcome kept when it is a step of one attempt (the only kind a
 * workflow asks about: Temporal retries the others), and the activity that answers the question.
 */
export function withStepOutcomes(activities: Record<string, AgentActivity>, bytesKept: number = STEP_OUTCOME_BYTES_KEPT): Record<string, AgentActivity> {
  const outcomes = new RecentCache<string, StepOutcome>(STEP_OUTCOMES_KEPT, { max: bytesKept, weigh: outcomeBytes });
  const recording =
    (step: AgentActivity): AgentActivity =>
    async (...args) => {
      const { info } = Context.current();
      const key = keyOf(info, info.activityId);
      if (!key || !beatsAsItStarts(info)) return step(...args);
      outcomes.set(key, { state: 'running' });
      try {
        const output = await step(...args);
        outcomes.set(key, { state: 'succeeded', output });
        return output;
      } catch (error) {
        outcomes.set(key, failureOf(error));
        throw error;
      }
    };
  const wrapped: Record<string, AgentActivity> = Object.fromEntries(Object.entries(activities).map(([kind, step]) => [kind, recording(step)]));
  wrapped[STEP_OUTCOME_ACTIVITY] = async (query: StepOutcomeQuery): Promise<StepOutcome> => {
    const key = keyOf(Context.current().info, query.activityId);
    return (key && outcomes.get(key)) || { state: 'unknown' };
  };
  return wrapped;
}
