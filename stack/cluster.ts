// The parts of the cluster profile, as functions: `npm run start:cluster` (stack/cluster-stack.ts)
// and the fleet bench's cluster stack (bench/lib/cluster-bench-stack.ts) start them alike.
// PostgreSQL with Ironflow's database, the data dir, the real Temporal server on it with mTLS
// to its frontend (stack/temporal-cluster.ts), and control-plane worker processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, repoRoot, temporalTlsEnv, type IronflowConfig } from '../services/config';
import { secureDataDir } from './data-dir';
import { ensureDatabase, startPostgres, type PostgresServer } from './postgres';
import { defaultClusterPorts, startTemporalCluster, type TemporalCluster } from './temporal-cluster';

/** Each part started, with what stops it: the caller stops them last-started first. */
export type AddStartedPart = (name: string, stop: () => Promise<void>) => void;

export interface ClusterBackends {
  postgres: PostgresServer;
  temporal: TemporalCluster;
  /** What the API and worker processes load on top of the base environment: the data dir, DATABASE_URL and IRONFLOW_TEMPORAL_TLS_*. */
  env: Record<string, string>;
  /** Loaded from the base environment and `env`. */
  config: IronflowConfig;
}

interface ClusterBackendsOptions {
  /** Holds postgres/ (its data), temporal/ (config, log) and, unless IRONFLOW_DATA_DIR says otherwise, ironflow/ (the data dir). */
  clusterDir: string;
  postgresPort: number;
  /** The IRONFLOW_* settings: the Temporal server listens on IRONFLOW_TEMPORAL_ADDRESS's port and Temporal's usual ports around it (defaultClusterPorts). */
  env: NodeJS.ProcessEnv;
  say(line: string): void;
}

/** PostgreSQL and Ironflow's database on it, the data dir (owner-only), and the Temporal server on PostgreSQL with its namespace registered. */
export async function startClusterBackends(options: ClusterBackendsOptions, add: AddStartedPart): Promise<ClusterBackends> {
  const { clusterDir, postgresPort, say } = options;
  // Traversable by the postgres user (PostgreSQL runs as that user when we are root); the data dirs below are not.
  mkdirSync(clusterDir, { recursive: true });
  chmodSync(clusterDir, 0o711);
  say(`ironflow: starting PostgreSQL on 127.0.0.1:${postgresPort} (data in ${clusterDir}/postgres)…`);
  const postgres = await startPostgres(path.join(clusterDir, 'postgres'), postgresPort);
  add('PostgreSQL', () => postgres.stop());
  await ensureDatabase(postgres.url, 'ironflow');
  const databaseEnv = {
    IRONFLOW_DATA_DIR: options.env.IRONFLOW_DATA_DIR || path.join(clusterDir, 'ironflow'),
    DATABASE_URL: postgres.database('ironflow'),
  };
  const { temporal: temporalSettings, dataDir } = loadConfig({ ...options.env, ...databaseEnv });
  say(`ironflow: data dir ${dataDir}`);
  secureDataDir(dataDir);

  const [host, port] = temporalSettings.address.split(':');
  say(`ironflow: setting up Temporal's databases and starting the Temporal server on ${temporalSettings.address} (TLS, client certificates required)…`);
  const temporal = await startTemporalCluster({
    dir: path.join(clusterDir, 'temporal'),
    postgresUrl: postgres.url,
    host: host ?? '127.0.0.1',
    ports: defaultClusterPorts(Number(port ?? 7233)),
    namespace: temporalSettings.namespace,
    searchAttributes: temporalSettings.searchAttributes,
    dynamicConfig: temporalSettings.dynamicConfig,
  });
  add('the Temporal server', () => temporal.stop());
  // The frontend requires a client certificate: the API and every worker process present the cluster's.
  const env = { ...databaseEnv, ...temporalTlsEnv(temporal.clientTls) };
  return { postgres, temporal, env, config: loadConfig({ ...options.env, ...env }) };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Its GET /metrics (metrics.workerAddress), or undefined when off. */
  metricsUrl: string | undefined;
  stop(): Promise<void>;
}

/** One control-plane worker process (stack/control-plane-worker.ts), its output in `logFile`; resolves once it polls. */
function startWorkerProcess(env: NodeJS.ProcessEnv, logFile: string, metricsUrl: string | undefined): Promise<WorkerProcess> {
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
    metricsUrl,
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

/** Worker `index`'s (from 0) address: `first`'s host, `first`'s port + index; `off` when the setting is off (undefined). */
function nthWorkerAddress(first: string | undefined, index: number): string {
  if (!first) return 'off';
  const at = first.lastIndexOf(':');
  return `${first.slice(0, at)}:${Number(first.slice(at + 1)) + index}`;
}

/**
 * `count` control-plane worker processes on `config`'s task queue, one after another, each
 * logging to <data dir>/worker-N.log, exporting its SDK metrics and serving its GET /metrics on
 * the ports after the first's. Start them after the API: it makes the data dir's secret-store
 * key they read.
 */
export async function startWorkerProcesses(env: NodeJS.ProcessEnv, config: IronflowConfig, count: number, add: AddStartedPart): Promise<WorkerProcess[]> {
  const workers: WorkerProcess[] = [];
  for (let index = 0; index < count; index++) {
    const metricsAddress = nthWorkerAddress(config.metrics.workerAddress, index);
    const workerEnv = {
      ...env,
      IRONFLOW_METRICS_SDK_ADDRESS: nthWorkerAddress(config.metrics.temporalSdkAddress, index),
      IRONFLOW_METRICS_WORKER_ADDRESS: metricsAddress,
    };
    const metricsUrl = metricsAddress === 'off' ? undefined : `http://${metricsAddress}/metrics`;
    const worker = await startWorkerProcess(workerEnv, path.join(config.dataDir, `worker-${index + 1}.log`), metricsUrl);
    add(`worker process ${worker.child.pid}`, () => worker.stop());
    workers.push(worker);
  }
  return workers;
}
