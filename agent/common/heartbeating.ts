// A running step heartbeats to Temporal while its agent lives, so an agent that dies mid-step,
// or a task taken by a poll that was still open when its ramdisk powered off, is noticed within
// the step's heartbeat timeout (not its whole timeout) and the attempt is retried, on a site
// step re-routed to another agent of the site. Temporal counts that timeout from the step's
// start, so a step shorter than half its timeout sends no beat at all: every beat is a call
// through the gateway and a write to the workflow's state on the Temporal server, and an
// immediate one per step was about one per step a machine's cycle makes (bench/README.md).
// Only a step of one attempt with a heartbeat timeout beats as it starts (core/step-started.ts):
// Temporal retries the others.
// The beats are sent as they are made, every half timeout: the SDK's own throttle (one send
// per 0.8 × the timeout) left a beat 0.2 × the timeout to arrive, and on a loaded control
// plane two ramdisk steps in a fleet of 100 missed it (bench/README.md), so agents' workers
// lower that throttle to MIN_BEAT_MS. Progress (bytes written, the disk being wiped) is
// recorded with reportProgress and rides on the next beat: sent at once, every chunk of a
// deploy would be a beat a second.
import { Context } from '@temporalio/activity';
import { beatsAsItStarts, STEP_STARTED } from '../../core/step-started';

/** Never beat more often than this, whatever the step's heartbeat timeout; agents' workers throttle sends to it. */
export const MIN_BEAT_MS = 1_000;
/** A step without a heartbeat timeout still beats, so a cancel reaches it (Temporal delivers it in a beat's answer). */
const UNTIMED_BEAT_MS = 10_000;

const latestDetails = new WeakMap<Context, Record<string, unknown>>();

/** The running step's progress, sent with its next beat and every later one; nothing outside an activity. */
export function reportProgress(details: Record<string, unknown>): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return; // not inside an activity
  }
  latestDetails.set(context, details);
}

/** How often a step beats: half its heartbeat timeout, so a beat always lands within it. */
export function beatEveryMs(heartbeatTimeoutMs: number | undefined): number {
  return heartbeatTimeoutMs ? Math.max(MIN_BEAT_MS, heartbeatTimeoutMs / 2) : UNTIMED_BEAT_MS;
}

export function heartbeating<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    const context = Context.current();
    const oneAttempt = beatsAsItStarts(context.info);
    const beat = () => context.heartbeat(latestDetails.get(context) ?? (oneAttempt ? STEP_STARTED : undefined));
    if (oneAttempt) beat();
    const timer = setInterval(beat, beatEveryMs(context.info.heartbeatTimeoutMs));
    try {
      return await fn(...args);
    } finally {
      clearInterval(timer);
    }
  };
}
