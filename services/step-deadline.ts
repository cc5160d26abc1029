// A step's own deadline: its attempt's start-to-close time, less a margin to report the
// failure itself, so a step that waits (on a BMC, for a join) ends with a message saying what
// it waited for instead of Temporal's bare timeout. Outside an activity (a tool, a test calling
// a step), a fixed budget.
import { Context } from '@temporalio/activity';

const OUTSIDE_ACTIVITY_MS = 120_000;
const MAX_MARGIN_MS = 5_000;

export function stepDeadline(now = Date.now()): number {
  let budget = OUTSIDE_ACTIVITY_MS;
  try {
    budget = Context.current().info.startToCloseTimeoutMs || budget;
  } catch {
    // not in an activity
  }
  return now + Math.max(1_000, budget - Math.min(MAX_MARGIN_MS, Math.round(budget / 10)));
}
