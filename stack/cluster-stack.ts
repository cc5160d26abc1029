// `npm run start:cluster [-- --workers N]`: Ironflow as it runs beyond one box, on one box.
// PostgreSQL (scripts/postgres.sh), the real Temporal server on it (stack/temporal-cluster.ts:
// schema by Temporal's SQL tool, all services in one process, the namespace and search
// attributes registered), the API on PostgreSQL, and N control-plane worker processes
// (default 1) polling the same task queue. Everything lives in IRONFLOW_CLUSTER_DIR
// (default .ironflow-cluster); Ctrl-C stops all of it; a second start reuses the data.
// docs/operations.md says how to point Ironflow at a cluster of your own instead.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultApiLog } from '../api/log-file';
import { repoRoot } from '../services/config';
import { startClusterBackends, startWorkerProcesses } from './cluster';
import { startControlPlane } from './control-plane';
import { announceControlPlane, say, StackParts, startFailed } from './stack-run';

const MAX_WORKERS = 8;

interface ClusterStackSettings {
  /** Holds postgres/ (its data), temporal/ (config, log) and, unless IRONFLOW_DATA_DIR says otherwise, ironflow/ (the data dir). */
  clusterDir: string;
  postgresPort: number;
  workers: number;
}

function settingsFrom(argv: string[], env: NodeJS.ProcessEnv): ClusterStackSettings {
  const { values } = parseArgs({ args: argv, options: { workers: { type: 'string', default: '1' } } });
  const workers = Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS)
    throw new Error(`--workers ${values.workers}: give the number of control-plane worker processes, 1 to ${MAX_WORKERS}`);
  const postgresPort = Number(env.IRONFLOW_CLUSTER_PG_PORT || 55434);
  if (!Number.isInteger(postgresPort) || postgresPort < 1 || postgresPort > 65535)
    throw new Error(`IRONFLOW_CLUSTER_PG_PORT=${env.IRONFLOW_CLUSTER_PG_PORT} is not a port number`);
  return { clusterDir: path.resolve(repoRoot, env.IRONFLOW_CLUSTER_DIR || '.ironflow-cluster'), postgresPort, workers };
}

async function main(): Promise<void> {
  const settings = settingsFrom(process.argv.slice(2), process.env);
  const parts = new StackParts('the API, the workers, Temporal and PostgreSQL');
  const add = (name: string, stop: () => Promise<void>) => parts.add(name, stop);
  try {
    const { temporal, env: clusterEnv, config } = await startClusterBackends({ ...settings, env: process.env, say }, add);
    const env: NodeJS.ProcessEnv = { ...process.env, ...clusterEnv };
    const controlPlane = await startControlPlane(config, { worker: false, logger: defaultApiLog(config.dataDir, process.env.IRONFLOW_LOG_LEVEL) });
    parts.add('the control plane', () => controlPlane.close());
    const workers = await startWorkerProcesses(env, config, settings.workers, add);
    announceControlPlane(controlPlane, [
      `ironflow: Temporal     ${temporal.address}  namespace ${temporal.namespace}  (PostgreSQL; mTLS with the client certificate ${temporal.clientTls.clientCertificate?.certFile}; log ${temporal.logFile})`,
      `ironflow: workers      ${workers.length} process(es) (pid ${workers.map((w) => w.child.pid).join(', ')}) on task queue ${config.controlQueue}; logs ${config.dataDir}/worker-N.log`,
      `ironflow: metrics      each worker's GET /metrics: ${workers.map((w) => w.metricsUrl ?? 'off').join(', ')}`,
    ]);
  } catch (err) {
    await parts.stopAll('start failed');
    throw err;
  }
  say('ironflow: ready. Try `npx ironflow status` in another terminal. Ctrl-C stops everything.');
}

main().catch(startFailed);
