// The control-plane worker as a process of its own, for more than one per control plane
// (`npm run start:cluster -- --workers 2`): every workflow and the control activities, on
// the task queue and Temporal of the IRONFLOW_* environment (services/config.ts). The API
// process made the data dir's secret-store key first. Prints "ready" once it polls;
// SIGTERM or SIGINT drains it (running activities finish) and exits.
import { hostname } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { databaseTarget } from '../core/database-target';
import { loadConfig } from '../services/config';
import { createDb } from '../services/db';
import { sealedDataConverter } from '../services/sealing';
import { loadSecretKey, SecretStore } from '../services/secret-store';
import { temporalConnectionOptions } from '../services/temporal/connection-options';
import { startControlPlaneWorker } from '../worker/control-plane';

const config = loadConfig();
const db = await createDb(databaseTarget(config));
const connection = await Connection.connect(temporalConnectionOptions(config.temporal));
// The control plane's history codec: with sealed histories this worker writes and reads ciphertext like the API.
const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: sealedDataConverter(config) });
const worker = await startControlPlaneWorker({
  db,
  secrets: new SecretStore(loadSecretKey(config.dataDir)),
  temporal,
  config,
  workerId: `${hostname()}:${process.pid}`,
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void worker.shutdown());
process.stdout.write(`ready: control-plane worker ${process.pid} on task queue ${config.controlQueue}\n`);
await worker.done;
await connection.close();
await db.$disconnect();
