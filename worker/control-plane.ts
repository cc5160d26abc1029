// The control-plane worker: every workflow, and the activities on the control queue.
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { ActivityDeps } from '../activities/deps';
import { sealedDataConverter } from '../services/sealing';
import { installWorkerRuntime } from './runtime';
import { workflowSource } from './workflow-bundle';

export interface ControlPlaneWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after shutdown()). */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startControlPlaneWorker(deps: ActivityDeps): Promise<ControlPlaneWorker> {
  installWorkerRuntime({ metricsAddress: deps.config.metrics.temporalSdkAddress });
  const connection = await NativeConnection.connect({ address: deps.config.temporal.address });
  const worker = await Worker.create({
    connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: deps.config.controlQueue,
    ...(await workflowSource()),
    activities: createActivities(deps),
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
