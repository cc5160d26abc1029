// The Temporal worker runtime of this process, with our log level (WARN unless
// IRONFLOW_WORKER_LOG_LEVEL says otherwise). Must run before the first worker or connection.
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

let installed = false;

export function installWorkerRuntime(): void {
  if (installed) return;
  installed = true;
  const level = (process.env.IRONFLOW_WORKER_LOG_LEVEL ?? 'WARN') as LogLevel;
  Runtime.install({ logger: new DefaultLogger(level) });
}
