// Every activity attempt the control-plane worker runs, timed and counted by activity and
// outcome (ironflow_control_activity_duration_seconds). A step's activity is its `use`
// (core/steps/registry.ts), so control steps show by kind; the label is the activity type
// the worker registered, a fixed set however many nodes run.
import { CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { controlActivitySeconds, type AttemptOutcome } from '../services/metrics/registry';

const outcomeOf = (err: unknown): AttemptOutcome => (err instanceof CancelledFailure ? 'canceled' : 'failed');

export const activityMetricsInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const started = performance.now();
      const observe = (outcome: AttemptOutcome) =>
        controlActivitySeconds.observe({ activity: ctx.info.activityType, outcome }, (performance.now() - started) / 1000);
      try {
        const result = await next(input);
        observe('completed');
        return result;
      } catch (err) {
        observe(outcomeOf(err));
        throw err;
      }
    },
  },
});
