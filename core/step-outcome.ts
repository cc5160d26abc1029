// What became of a step of one attempt that timed out after its agent beat that it started:
// its answer may have been lost on the way (a completion Temporal never recorded, a gateway
// restarted as the step finished) while the work itself was done. Retrying such a step could
// kexec a machine twice, so instead the workflow asks the agent on the step's own queue, as
// Ironic's conductor asks its agent for a command's status. Agents keep the outcomes of their
// recent steps of one attempt in memory (agent/common/step-outcomes.ts); the workflow asks with
// STEP_OUTCOME_ACTIVITY (workflows/provision/lost-task.ts). An agent that restarted since
// knows nothing of the step, and the step fails as it always did.

/** The activity every agent's worker answers the question with; no step kind has this name. */
export const STEP_OUTCOME_ACTIVITY = 'agent.stepOutcome';

/** Which step: the activity id of its attempt, in the asking workflow run (an agent answers a run about its own steps only). */
export interface StepOutcomeQuery {
  activityId: string;
}

export type StepOutcome =
  | { state: 'succeeded'; output: unknown }
  | { state: 'failed'; type: string | null; message: string }
  /** Still at work: its beats, not its answer, were lost. */
  | { state: 'running' }
  /** Not a step this agent ran since it started. */
  | { state: 'unknown' };

/** The longest failure message and type kept from an agent's answer. */
export const OUTCOME_MESSAGE_MAX = 4096;
const OUTCOME_TYPE_MAX = 64;

/**
 * The agent's answer as a StepOutcome, or what is wrong with it (with its path): the answer
 * comes from a machine's agent, which the workflow does not trust, and runs in workflow code,
 * where a malformed one would otherwise fail the workflow task again and again. A long failure
 * message is cut to OUTCOME_MESSAGE_MAX. Plain checks, no schema library: the workflow bundle
 * loads none.
 */
export function parseStepOutcome(answer: unknown): StepOutcome | { problem: string } {
  if (typeof answer !== 'object' || answer === null) return { problem: 'the answer is not an object' };
  const { state } = answer as { state?: unknown };
  if (state === 'running' || state === 'unknown') return { state };
  if (state === 'succeeded') return { state, output: (answer as { output?: unknown }).output };
  if (state !== 'failed') return { problem: 'state is not one of succeeded, failed, running, unknown' };
  const { type, message } = answer as { type?: unknown; message?: unknown };
  if (type !== null && (typeof type !== 'string' || type.length === 0 || type.length > OUTCOME_TYPE_MAX))
    return { problem: `type is neither null nor a string of 1 to ${OUTCOME_TYPE_MAX} characters` };
  if (typeof message !== 'string') return { problem: 'message is not a string' };
  return { state, type, message: message.length > OUTCOME_MESSAGE_MAX ? `${message.slice(0, OUTCOME_MESSAGE_MAX)}…` : message };
}
