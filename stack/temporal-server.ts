// Starts the Temporal CLI dev server (a real Temporal server on SQLite) and waits until
// its frontend answers. The process handling is shared with the cluster profile's real
// server (stack/temporal-cluster.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { IronflowConfig } from '../services/config';
import { codecEndpointUrl, historiesMayBeSealed } from '../services/sealing';
import type { TemporalConnectionOptions } from '../services/temporal/connection-options';
import { partitionDynamicConfig, taskQueuePartitionsFor, type TaskQueuePartitions } from './task-queue-partitions';
import { requireTool } from './tools';

export interface TemporalServerOptions {
  address: string; // host:port of the frontend
  uiPort?: number; // omitted: headless
  namespace: string;
  dbFile?: string; // omitted: in memory
  searchAttributes: Record<string, string>;
  dynamicConfig: Record<string, unknown>;
  /** Partitions of each task queue (temporal-dev.yaml: 1); omitted, Temporal's default. Never lowers a store's reads (task-queue-partitions.ts). */
  taskQueuePartitions?: number;
  /** SQLite pragmas of a file store (temporal-dev.yaml: WAL). */
  sqlitePragmas?: Record<string, string>;
  logFile: string;
  /** The Web UI decodes sealed payloads through this remote codec (the API's, docs/sealed-histories.md). */
  codecEndpoint?: string;
}

/** The server process ended before its frontend answered (a port taken meanwhile, a crash). */
export class TemporalServerExitedError extends Error {}

export interface TemporalServer {
  process: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** What temporal-dev.yaml sets of any dev server, wherever its store and ports are. */
export function serverSettings(
  temporal: IronflowConfig['temporal'],
): Pick<TemporalServerOptions, 'searchAttributes' | 'dynamicConfig' | 'taskQueuePartitions' | 'sqlitePragmas'> {
  return {
    searchAttributes: temporal.searchAttributes,
    dynamicConfig: temporal.dynamicConfig,
    taskQueuePartitions: temporal.taskQueuePartitions,
    sqlitePragmas: temporal.sqlitePragmas,
  };
}

/** The dev stack's server as temporal-dev.yaml describes it: Web UI, store in the data dir. */
export function devServerOptions(config: IronflowConfig): TemporalServerOptions {
  return {
    address: config.temporal.address,
    uiPort: config.temporal.uiPort,
    namespace: config.temporal.namespace,
    dbFile: config.temporal.dbFile,
    ...serverSettings(config.temporal),
    logFile: path.join(config.dataDir, 'temporal.log'),
    ...(historiesMayBeSealed(config) ? { codecEndpoint: codecEndpointUrl(config) } : {}),
  };
}

/** The server's command line; `partitions` as taskQueuePartitionsFor decided them for its store. */
export function temporalServerArgs(options: TemporalServerOptions, partitions?: TaskQueuePartitions): string[] {
  const [host, port] = options.address.split(':');
  const args = ['server', 'start-dev', '--ip', host ?? '127.0.0.1', '--port', port ?? '7233', '--log-level', 'warn'];
  args.push(...(options.uiPort ? ['--ui-port', String(options.uiPort), '--ui-ip', host ?? '127.0.0.1'] : ['--headless']));
  if (options.dbFile)
    args.push(
      '--db-filename',
      options.dbFile,
      ...Object.entries(options.sqlitePragmas ?? {}).flatMap(([pragma, value]) => ['--sqlite-pragma', `${pragma}=${value}`]),
    );
  if (options.uiPort && options.codecEndpoint) args.push('--ui-codec-endpoint', options.codecEndpoint);
  if (options.namespace !== 'default') args.push('--namespace', options.namespace);
  for (const [name, type] of Object.entries(options.searchAttributes)) args.push('--search-attribute', `${name}=${type}`);
  const dynamicConfig = { ...options.dynamicConfig, ...(partitions ? partitionDynamicConfig(partitions) : {}) };
  for (const [key, value] of Object.entries(dynamicConfig)) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  return args;
}

/** Calls `ready` on a fresh connection to the frontend until it resolves; fails early when `child` exits. */
async function waitForFrontend(
  frontend: TemporalConnectionOptions,
  child: ChildProcess,
  deadlineMs: number,
  ready: (connection: Connection) => Promise<unknown>,
): Promise<void> {
  const started = Date.now();
  let lastError: unknown;
  while (Date.now() - started < deadlineMs) {
    if (child.exitCode !== null) throw new TemporalServerExitedError(`the Temporal server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ ...frontend, connectTimeout: 1000 });
      try {
        await ready(connection);
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`the Temporal server did not answer on ${frontend.address} within ${deadlineMs} ms: ${String(lastError)}`);
}

function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log written)';
  }
}

export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  if (options.dbFile) mkdirSync(path.dirname(options.dbFile), { recursive: true });
  const partitions = options.taskQueuePartitions === undefined ? undefined : taskQueuePartitionsFor(options.dbFile, options.taskQueuePartitions);
  return spawnTemporalServer({
    binary: requireTool('temporal'),
    args: temporalServerArgs(options, partitions),
    frontend: { address: options.address },
    logFile: options.logFile,
    ready: (connection) => connection.workflowService.describeNamespace({ namespace: options.namespace }),
  });
}

interface SpawnTemporalServerOptions {
  binary: string;
  args: string[];
  /** How to reach its frontend (with TLS, the cluster's client certificate). */
  frontend: TemporalConnectionOptions;
  /** Its stdout and stderr, appended. */
  logFile: string;
  /** Resolves once the server is usable; tried on a fresh connection until then. */
  ready: (connection: Connection) => Promise<unknown>;
  deadlineMs?: number;
}

/** Starts a Temporal server process (the dev server or the real one) and waits until `ready` passes; on failure its log's end is in the error. */
export async function spawnTemporalServer(options: SpawnTemporalServerOptions): Promise<TemporalServer> {
  mkdirSync(path.dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(options.binary, options.args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForFrontend(options.frontend, child, options.deadlineMs ?? 60_000, options.ready);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    const message = `${(err as Error).message}; its log is ${options.logFile}, ending:\n${logTail(options.logFile)}`;
    throw err instanceof TemporalServerExitedError ? new TemporalServerExitedError(message) : new Error(message);
  }
  return {
    process: child,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
