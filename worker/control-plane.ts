// The control-plane worker: every workflow, and the activities on the control queue.
import { Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { ActivityDeps } from '../activities/deps';
import { sealedDataConverter } from '../services/sealing';
import { temporalConnectionOptions } from '../services/temporal/connection-options';
import { activityMetricsInterceptor } from './activity-metrics';
import { stepStartedBeatInterceptor } from './step-started-beat';
import { installWorkerRuntime } from './runtime';
import { workflowSource } from './workflow-bundle';
import { connectWorker } from './worker-connection';
import { workflowMetricsSinks } from './workflow-metrics-sink';

export interface ControlPlaneWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after shutdown()). */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startControlPlaneWorker(deps: ActivityDeps): Promise<ControlPlaneWorker> {
  installWorkerRuntime({
    metricsAddress: deps.config.metrics.temporalSdkAddress,
    metricsSetting: 'metrics.temporalSdkAddress in temporal-dev.yaml or IRONFLOW_METRICS_SDK_ADDRESS (or off)',
  });
  const connection = await connectWorker(temporalConnectionOptions(deps.config.temporal));
  const worker = await Worker.create({
    connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: deps.config.controlQueue,
    ...(await workflowSource(deps.config.dataDir)),
    activities: createActivities(deps),
    // Activities by type and outcome, workflow runs by type, state and outcome (GET /metrics); one-attempt steps beat as they start.
    interceptors: { activity: [activityMetricsInterceptor, stepStartedBeatInterceptor] },
    sinks: workflowMetricsSinks,
    // Sealed histories: workflow and activity payloads this worker writes are ciphertext in Temporal.
    dataConverter: sealedDataConverter(deps.config),
  });
  const done = worker.run().finally(() => connection.close());
  return {
    worker,
    done,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
