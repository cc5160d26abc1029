// A running step heartbeats to Temporal every second while its agent lives, so an agent that
// dies mid-step, or a task taken by a poll that was still open when its ramdisk powered off, is
// noticed within the step's heartbeat timeout (not its whole timeout) and the attempt is
// retried, on a site step re-routed to another agent of the site. The SDK throttles what it
// actually sends. A step that reports progress (bytes written, the disk being wiped) does so
// with reportProgress: every beat after that carries its latest details.
import { Context } from '@temporalio/activity';

const HEARTBEAT_EVERY_MS = 1_000;

const latestDetails = new WeakMap<Context, Record<string, unknown>>();

/** The running step's progress, sent now and with every later beat; nothing outside an activity. */
export function reportProgress(details: Record<string, unknown>): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return; // not inside an activity
  }
  latestDetails.set(context, details);
  context.heartbeat(details);
}

export function heartbeating<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    const context = Context.current();
    context.heartbeat();
    const timer = setInterval(() => context.heartbeat(latestDetails.get(context)), HEARTBEAT_EVERY_MS);
    try {
      return await fn(...args);
    } finally {
      clearInterval(timer);
    }
  };
}
