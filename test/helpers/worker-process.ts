// The control-plane worker as a process of its own (stack/control-plane-worker.ts), as the
// cluster profile and an operator's extra workers run it: on a test control plane's database,
// data dir, Temporal and task queue, with the run's prebuilt workflow bundle.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { inject } from 'vitest';
import { repoRoot, type IronflowConfig } from '../../services/config';

export interface WorkerProcess {
  child: ChildProcess;
  /** Its output up to "ready" (and after). */
  stdout(): string;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
}

/** The settings a worker process takes from a test control plane's config: its data dir, Temporal, task queue and database, and the run's workflow bundle. */
export function workerProcessEnv(config: IronflowConfig): Record<string, string> {
  return {
    IRONFLOW_DATA_DIR: config.dataDir,
    IRONFLOW_TEMPORAL_ADDRESS: config.temporal.address,
    IRONFLOW_CONTROL_QUEUE: config.controlQueue,
    DATABASE_URL: config.databaseUrl,
    IRONFLOW_WORKFLOW_BUNDLE: inject('workflowBundle'),
  };
}

/** Resolves once it polls ("ready"); rejects with its error output when it exits before. `env` overrides the settings it is given. */
export function startWorkerProcess(config: IronflowConfig, env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'stack/control-plane-worker.ts')], {
    cwd: repoRoot,
    env: { ...process.env, ...workerProcessEnv(config), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const handle: WorkerProcess = {
    child,
    stdout: () => stdout,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', () => stdout.includes('ready') && resolve(handle));
    child.once('exit', (code) => reject(new Error(`the worker process exited (${code}) before ready: ${stderr}`)));
  });
}
