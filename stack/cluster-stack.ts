// `npm run start:cluster [-- --workers N]`: Ironflow as it runs beyond one box, on one box.
// PostgreSQL (scripts/postgres.sh), the real Temporal server on it (stack/temporal-cluster.ts:
// schema by Temporal's SQL tool, all services in one process, the namespace and search
// attributes registered), the API on PostgreSQL, and N control-plane worker processes
// (default 1) polling the same task queue. Everything lives in IRONFLOW_CLUSTER_DIR
// (default .ironflow-cluster); Ctrl-C stops all of it; a second start reuses the data.
// docs/operations.md says how to point Ironflow at a cluster of your own instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultApiLog } from '../api/log-file';
import { loadConfig, repoRoot, temporalTlsEnv, type IronflowConfig } from '../services/config';
import { startControlPlane } from './control-plane';
import { secureDataDir } from './data-dir';
import { ensureDatabase, startPostgres } from './postgres';
import { announceControlPlane, say, StackParts, startFailed } from './stack-run';
import { defaultClusterPorts, startTemporalCluster } from './temporal-cluster';

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

interface WorkerProcess {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** One control-plane worker process (stack/control-plane-worker.ts), its output in `logFile`; resolves once it polls. */
function startWorkerProcess(env: NodeJS.ProcessEnv, logFile: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'stack', 'control-plane-worker.ts')], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const worker: WorkerProcess = {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(worker));
    child.once('exit', (code) => reject(new Error(`control-plane worker process exited (${code}) before it polled: see ${logFile}`)));
  });
}

/** Worker `index` (from 0) exports its SDK metrics beside the first one's (the API appends only the first's). */
function workerMetricsAddress(config: IronflowConfig, index: number): string {
  const first = config.metrics.temporalSdkAddress;
  if (!first) return 'off';
  if (index === 0) return first;
  const at = first.lastIndexOf(':');
  return `${first.slice(0, at)}:${Number(first.slice(at + 1)) + index}`;
}

async function main(): Promise<void> {
  const settings = settingsFrom(process.argv.slice(2), process.env);
  const parts = new StackParts('the API, the workers, Temporal and PostgreSQL');
  // Traversable by the postgres user (PostgreSQL runs as that user when we are root); the data dirs below are not.
  mkdirSync(settings.clusterDir, { recursive: true });
  chmodSync(settings.clusterDir, 0o711);
  try {
    say(`ironflow: starting PostgreSQL on 127.0.0.1:${settings.postgresPort} (data in ${settings.clusterDir}/postgres)…`);
    const postgres = await startPostgres(path.join(settings.clusterDir, 'postgres'), settings.postgresPort);
    parts.add('PostgreSQL', () => postgres.stop());
    await ensureDatabase(postgres.url, 'ironflow');
    const baseEnv: NodeJS.ProcessEnv = {
      ...process.env,
      IRONFLOW_DATA_DIR: process.env.IRONFLOW_DATA_DIR || path.join(settings.clusterDir, 'ironflow'),
      DATABASE_URL: postgres.database('ironflow'),
    };
    const { temporal: temporalSettings, dataDir } = loadConfig(baseEnv);
    say(`ironflow: data dir ${dataDir}`);
    secureDataDir(dataDir);

    const [host, port] = temporalSettings.address.split(':');
    say(`ironflow: setting up Temporal's databases and starting the Temporal server on ${temporalSettings.address} (TLS, client certificates required)…`);
    const temporal = await startTemporalCluster({
      dir: path.join(settings.clusterDir, 'temporal'),
      postgresUrl: postgres.url,
      host: host ?? '127.0.0.1',
      ports: defaultClusterPorts(Number(port ?? 7233)),
      namespace: temporalSettings.namespace,
      searchAttributes: temporalSettings.searchAttributes,
      dynamicConfig: temporalSettings.dynamicConfig,
    });
    parts.add('the Temporal server', () => temporal.stop());
    // The frontend requires a client certificate: the API and every worker process present the cluster's.
    const env: NodeJS.ProcessEnv = { ...baseEnv, ...temporalTlsEnv(temporal.clientTls) };
    const config = loadConfig(env);

    const controlPlane = await startControlPlane(config, { worker: false, logger: defaultApiLog(config.dataDir, process.env.IRONFLOW_LOG_LEVEL) });
    parts.add('the control plane', () => controlPlane.close());
    const workers: WorkerProcess[] = [];
    for (let index = 0; index < settings.workers; index++) {
      const workerEnv = { ...env, IRONFLOW_METRICS_SDK_ADDRESS: workerMetricsAddress(config, index) };
      const worker = await startWorkerProcess(workerEnv, path.join(config.dataDir, `worker-${index + 1}.log`));
      parts.add(`worker process ${worker.child.pid}`, () => worker.stop());
      workers.push(worker);
    }
    announceControlPlane(controlPlane, [
      `ironflow: Temporal     ${temporal.address}  namespace ${temporal.namespace}  (PostgreSQL; mTLS with the client certificate ${temporal.clientTls.clientCertificate?.certFile}; log ${temporal.logFile})`,
      `ironflow: workers      ${workers.length} process(es) (pid ${workers.map((w) => w.child.pid).join(', ')}) on task queue ${config.controlQueue}; logs ${config.dataDir}/worker-N.log`,
    ]);
  } catch (err) {
    await parts.stopAll('start failed');
    throw err;
  }
  say('ironflow: ready. Try `npx ironflow status` in another terminal. Ctrl-C stops everything.');
}

main().catch(startFailed);
