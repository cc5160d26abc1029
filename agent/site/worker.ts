// The site agent's Temporal worker: activities only, on its own task queue (from the join
// answer), registering exactly SITE_STEP_KINDS. Any other activity sent to the queue hits
// the `default` handler, which refuses it without retries (UNSUPPORTED).
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { installWorkerRuntime } from '../../worker/runtime';
import { heartbeating } from './heartbeating';
import { reportingFailures } from './step-failure';
import { SITE_STEP_KINDS, type SiteStepKind } from './step-kinds';
import type { SiteStep } from './steps/deps';

export interface SiteWorker {
  stop(): Promise<void>;
}

export interface SiteWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  steps: Record<SiteStepKind, SiteStep>;
}

function refuseOtherKinds(): never {
  const kind = Context.current().info.activityType;
  throw ApplicationFailure.create({
    type: 'UNSUPPORTED',
    message: `${kind} is not a site step kind; a site agent runs only ${SITE_STEP_KINDS.join(', ')}`,
    nonRetryable: true,
  });
}

export async function startSiteWorker(options: SiteWorkerOptions): Promise<SiteWorker> {
  installWorkerRuntime();
  const activities: Record<string, (...args: never[]) => Promise<unknown>> = { default: async () => refuseOtherKinds() };
  for (const kind of SITE_STEP_KINDS) activities[kind] = heartbeating(reportingFailures(options.steps[kind]));
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({ connection, namespace: options.namespace, taskQueue: options.taskQueue, activities, shutdownGraceTime: '5s' });
  const done = worker.run().finally(() => connection.close());
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
