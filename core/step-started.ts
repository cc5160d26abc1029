// What a step of one attempt beats as it starts, on an agent (agent/common/heartbeating.ts) or
// the control plane (worker/step-started-beat.ts): a timeout with no beat recorded then says the
// step's task never reached its worker (Temporal lost it on the way), and the workflow sends it
// again (workflows/provision/lost-task.ts). Later beats carry it too when the step reports no progress.
export const STEP_STARTED = { started: true } as const;

/** Whether an attempt beats as it starts: a step of one attempt with a heartbeat timeout (what the workflow sends again when lost). */
export const beatsAsItStarts = (info: { retryPolicy?: { maximumAttempts?: number }; heartbeatTimeoutMs?: number }): boolean =>
  info.retryPolicy?.maximumAttempts === 1 && Boolean(info.heartbeatTimeoutMs);
