// The deadline of a call the gateway forwards to Temporal. Temporal answers a long poll with
// no task about a second before the deadline it is given, and a task it hands out in that
// second is recorded as started. Given the agent's own deadline, that answer would still have
// the gateway to cross (the task's input unsealed, a loaded event loop) and could arrive
// after the agent gave up: the step then waits out its heartbeat or start-to-close timeout.
// So Temporal gets the agent's deadline less a delivery margin.

/** No call outlives this, whatever deadline the agent asked for (a long poll asks for about a minute). */
export const MAX_CALL_MS = 5 * 60_000;
/** The most time kept back for the answer's way through the gateway. */
export const DELIVERY_MARGIN_MS = 5_000;
/** The share of a short call's time kept back instead: a 10 s call gets 9 s upstream. */
const DELIVERY_MARGIN_SHARE = 0.1;

/** The deadline for Temporal, in ms since the epoch, of a call the agent gave until `askedMs` (Infinity: no deadline). */
export function upstreamDeadline(askedMs: number, nowMs: number): number {
  const left = Math.min(askedMs, nowMs + MAX_CALL_MS) - nowMs;
  return nowMs + Math.max(0, left - Math.min(DELIVERY_MARGIN_MS, left * DELIVERY_MARGIN_SHARE));
}
