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
