// The control-plane worker as a process of its own, for more than one per control plane
// (`npm run start:cluster -- --workers 2`): every workflow and the control activities, on
// the task queue and Temporal of the IRONFLOW_* environment (services/config.ts). The API
// process made the data dir's secret-store key first. Its metrics (the workflows and control
// activities it ran, its process, the SDK's worker metrics) are its own: it serves them on
// metrics.workerAddress, since the API's GET /metrics sees only its own process. Prints
// "ready" once it polls; SIGTERM or SIGINT drains it (running activities finish) and exits.
import { hostname } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { databaseTarget } from '../core/database-target';
import { loadConfig } from '../services/config';
import { createDb } from '../services/db';
import { startMetricsListener } from '../services/metrics/listener';
import { metricsRegistry } from '../services/metrics/registry';
import { sealedDataConverter } from '../services/sealing';
import { loadSecretKey, SecretStore } from '../services/secret-store';
import { temporalConnectionOptions } from '../services/temporal/connection-options';
import { startControlPlaneWorker } from '../worker/control-plane';

const config = loadConfig();
const db = await createDb(databaseTarget(config));
const connection = await Connection.connect(temporalConnectionOptions(config.temporal));
// The control plane's history codec: with sealed histories this worker writes and reads ciphertext like the API.
const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: sealedDataConverter(config) });
// Before it polls: an address already taken stops the process before it takes any work.
const log = {
  info: (message: string, fields?: Record<string, unknown>) => process.stdout.write(`${message} ${JSON.stringify(fields ?? {})}\n`),
  error: (message: string, fields?: Record<string, unknown>) => process.stderr.write(`${message} ${JSON.stringify(fields ?? {})}\n`),
};
const metrics = config.metrics.workerAddress
  ? await startMetricsListener({
      address: config.metrics.workerAddress,
      registry: metricsRegistry,
      temporalSdkAddress: config.metrics.temporalSdkAddress,
      setting: { name: 'metrics.workerAddress in temporal-dev.yaml or IRONFLOW_METRICS_WORKER_ADDRESS (or off)', path: 'metrics.workerAddress' },
      log,
    })
  : undefined;
const worker = await startControlPlaneWorker({
  db,
  secrets: new SecretStore(loadSecretKey(config.dataDir)),
  temporal,
  config,
  workerId: `${hostname()}:${process.pid}`,
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void worker.shutdown());
process.stdout.write(`ready: control-plane worker ${process.pid} on task queue ${config.controlQueue}${metrics ? `, metrics on ${metrics.url}` : ''}\n`);
await worker.done;
await metrics?.close();
await connection.close();
await db.$disconnect();
