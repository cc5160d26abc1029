// A control-queue step of one attempt beats as it starts, as agents' steps do
// (core/step-started.ts): a timeout with no beat recorded then says Temporal lost its task on
// the way (its store timed out as it handed it out), and the workflow sends it again.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { beatsAsItStarts, STEP_STARTED } from '../core/step-started';

export const stepStartedBeatInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute(input, next) {
      if (!ctx.info.isLocal && beatsAsItStarts(ctx.info)) ctx.heartbeat(STEP_STARTED);
      return next(input);
    },
  },
});
