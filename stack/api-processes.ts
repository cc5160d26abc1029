// More processes serving the API on its one port (api.processes, IRONFLOW_API_PROCESSES), as
// Ironic's api_workers and MAAS's regiond workers do: a Node process answers on one core, and a
// page of nodes is CPU work (bench/README.md, "The API"). The control plane's process keeps
// what there is one of (the migrations, the root credential, the agent gateway, the worker) and
// serves the API too; it hands its listening socket to each API process (stack/api-process.ts),
// and the kernel gives each new connection to whichever process accepts it first. Every route
// answers the same in every process, as their state is in the database; what each process keeps
// for itself is the refusal rate limit (api/rate-limit.ts: a source gets each process's
// allowance) and caches of what does not change. GET /metrics answers, in any process, the sum
// over all of them. An API process that exits after it served is started again, less and less
// often while its successors keep exiting soon after they start.
import { fork, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:net';
import path from 'node:path';
import { AggregatorRegistry } from 'prom-client';
import type { ApiContext } from '../api/context';
import { repoRoot, type IronflowConfig } from '../services/config';
import { metricsRegistry } from '../services/metrics/registry';
import type { FromApiProcess, ProcessMetricsJson, ToApiProcess } from './api-process-messages';
import { PendingAnswers } from './ipc-answers';

/**
 * Connections the kernel holds for the API before it accepts them. Node's default (511) is
 * smaller than a fleet's burst: with 1,000 enrolls sent at once the queue overflowed while the
 * API was busy answering, the kernel dropped the handshakes past it (the clients' SYNs
 * retransmitted 1, 3, 7 s later, so the requests trickled in) and reset some after their
 * request was sent (read ECONNRESET). Queued, they wait their turn; Linux caps this at
 * net.core.somaxconn (4096 since 5.4).
 */
export const API_LISTEN_BACKLOG = 4096;

const API_PROCESS_ENTRY = path.join(repoRoot, 'stack', 'api-process.ts');
/** An API process opens the database and Temporal before it serves; a cold start compiles the API's code too. */
const READY_WAIT_MS = 120_000;
/** A scrape waits this long for each API process's metrics, then answers without a silent one. */
export const METRICS_WAIT_MS = 5_000;
/** An API process that exits is started again after this, doubled for each one that exits within RESTART_RESET_MS of serving, up to RESTART_DELAY_MAX_MS. */
const RESTART_DELAY_MS = 1_000;
const RESTART_DELAY_MAX_MS = 60_000;
const RESTART_RESET_MS = 60_000;
/** SIGTERM lets a process finish its requests; past this it is killed. */
const STOP_WAIT_MS = 10_000;

/**
 * libuv accepts every pending connection at once when woken, so one process would take a burst
 * of new connections alone (18 of 20 keep-alive connections in a test here); with this set,
 * each process accepts one and lets the others take the next.
 */
const SINGLE_ACCEPT = 'UV_TCP_SINGLE_ACCEPT';

/**
 * libuv reads UV_TCP_SINGLE_ACCEPT once, at the process's first TCP listen: the control plane
 * sets it before it listens on anything and, once the API listens, puts its environment back as
 * it was (keepFromLaterProcesses), so the processes it starts later (a site agent, say) do not
 * inherit it. API processes get it in the environment they are started with.
 */
export function acceptOneConnectionAtATime(): { keepFromLaterProcesses(): void } {
  const before = process.env[SINGLE_ACCEPT];
  process.env[SINGLE_ACCEPT] = '1';
  return {
    keepFromLaterProcesses() {
      if (before === undefined) delete process.env[SINGLE_ACCEPT];
      else process.env[SINGLE_ACCEPT] = before;
    },
  };
}

export interface ApiProcessesOptions {
  /** The API's listening socket, handed to every API process. */
  server: Server;
  /** API processes to start beside this one. */
  count: number;
  config: IronflowConfig;
  agentGateway: ApiContext['agentGateway'];
  workerSdkMetricsAddress: ApiContext['workerSdkMetricsAddress'];
  /** The API processes' log: the control plane's, or none. */
  logger: false | { level: string; file: string };
  /** Where an API process's unexpected exit is told. */
  log: { error(details: object, message: string): void };
}

export interface ApiProcesses {
  /** The pids of the API processes serving now (this process's not among them; one starting again is not). */
  pids(): number[];
  /** This process's metrics, then each API process's that answered within METRICS_WAIT_MS. */
  metricsByProcess(): Promise<ProcessMetricsJson[]>;
  /** The control plane's metrics summed over this process and the API processes, in Prometheus' text format. */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

export async function startApiProcesses(options: ApiProcessesOptions): Promise<ApiProcesses> {
  const { server, config, agentGateway, workerSdkMetricsAddress, logger, log } = options;
  const running = new Set<ChildProcess>();
  const serving = new Set<ChildProcess>();
  const metricAnswers = new PendingAnswers<ProcessMetricsJson>();
  let closing = false;

  const metricsOf = (child: ChildProcess) => metricAnswers.ask((id, failed) => tell(child, { kind: 'metrics', id }, failed), METRICS_WAIT_MS);
  const metricsByProcess = async (): Promise<ProcessMetricsJson[]> => {
    const [own, ...theirs] = await Promise.all([metricsRegistry.getMetricsAsJSON(), ...[...running].map(metricsOf)]);
    return [own, ...theirs.filter((metrics): metrics is ProcessMetricsJson => metrics !== undefined)];
  };
  const metrics = async () => AggregatorRegistry.aggregate(await metricsByProcess()).metrics();

  function onMessage(child: ChildProcess, message: FromApiProcess): void {
    if (message.kind === 'metrics') metricAnswers.answer(message.id, message.metrics);
    else if (message.kind === 'awaiting-socket') tell(child, { kind: 'listen' }, undefined, server);
    else if (message.kind === 'all-metrics') {
      metrics().then(
        (text) => tell(child, { kind: 'all-metrics', id: message.id, text }),
        (error: unknown) => log.error({ error: (error as Error).message }, 'summing the API processes’ metrics failed'),
      );
    }
  }

  /** Starts an API process in the place of one that exited, `delayMs` from now; one that cannot start is tried again later. */
  function restartAfter(delayMs: number): void {
    setTimeout(() => {
      if (closing) return;
      const next = Math.min(2 * delayMs, RESTART_DELAY_MAX_MS);
      start(next).catch((error: unknown) => {
        log.error({ error: (error as Error).message, retryInMs: next }, 'an API process did not start again');
        restartAfter(next);
      });
    }, delayMs).unref();
  }

  /** `restartDelayMs`: how long to wait before its successor if it exits within RESTART_RESET_MS of serving. */
  function start(restartDelayMs = RESTART_DELAY_MS): Promise<void> {
    const child = fork(API_PROCESS_ENTRY, [], {
      cwd: repoRoot,
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, [SINGLE_ACCEPT]: '1' },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    running.add(child);
    let servedAt: number | undefined;
    child.on('message', (message: FromApiProcess) => onMessage(child, message));
    child.once('exit', (code, signal) => {
      running.delete(child);
      serving.delete(child);
      if (closing || servedAt === undefined) return;
      const delayMs = Date.now() - servedAt >= RESTART_RESET_MS ? RESTART_DELAY_MS : restartDelayMs;
      log.error({ pid: child.pid, code, signal, restartInMs: delayMs }, 'an API process exited: starting another');
      restartAfter(delayMs);
    });
    tell(child, { kind: 'serve', config, agentGateway, workerSdkMetricsAddress, logger });
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`an API process did not serve within ${READY_WAIT_MS / 1000} s`));
      }, READY_WAIT_MS);
      child.on('message', (message: FromApiProcess) => {
        if (message.kind !== 'ready') return;
        servedAt = Date.now();
        serving.add(child);
        clearTimeout(timer);
        resolve();
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`an API process exited (${signal ?? `code ${code}`}) before it served: its error is in the output above`));
      });
    });
  }

  const stopAll = async () => {
    closing = true;
    await Promise.all([...running].map(stop));
  };
  try {
    await Promise.all(Array.from({ length: options.count }, () => start()));
  } catch (error) {
    await stopAll();
    throw error;
  }
  return { pids: () => [...serving].flatMap((child) => (child.pid === undefined ? [] : [child.pid])), metricsByProcess, metrics, close: stopAll };
}

function tell(child: ChildProcess, message: ToApiProcess, failed: () => void = () => undefined, handle?: Server): void {
  if (!child.connected) return failed();
  child.send(message, handle, (error) => error && failed());
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), STOP_WAIT_MS);
  await exited;
  clearTimeout(killer);
}
