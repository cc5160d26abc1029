// A running site step heartbeats to Temporal, so an agent that dies mid-step is noticed
// within the step's heartbeat timeout (not its whole timeout) and the attempt is retried,
// then re-routed to another agent of the site. The SDK throttles what it actually sends.
import { Context } from '@temporalio/activity';

const HEARTBEAT_EVERY_MS = 1_000;

export function heartbeating<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    const context = Context.current();
    context.heartbeat();
    const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      return await fn(...args);
    } finally {
      clearInterval(timer);
    }
  };
}
