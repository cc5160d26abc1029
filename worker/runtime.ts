// The Temporal worker runtime of this process, with our log level (WARN unless
// IRONFLOW_WORKER_LOG_LEVEL says otherwise) and, when asked (the control plane's worker, a site
// agent's [metrics]), the SDK's worker metrics exported for Prometheus. Must run before the
// first worker or connection: the SDK installs one runtime per process.
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';

/** Agents' workers are activity-only by design: this warning says nothing to an operator. */
const EXPECTED = 'No workflows registered, not polling for workflow tasks';

let installed: { metricsAddress?: string } | undefined;

export interface WorkerRuntimeOptions {
  /** host:port of the SDK's Prometheus exporter; none when unset. */
  metricsAddress?: string;
  /** The setting that names metricsAddress, for the error when it cannot listen (e.g. `[metrics] temporal_sdk_address`). */
  metricsSetting?: string;
}

export function installWorkerRuntime(options: WorkerRuntimeOptions = {}): void {
  if (installed) {
    // Agents sharing a process (an emulated fleet) share its runtime: a second exporter cannot be added.
    if (options.metricsAddress && options.metricsAddress !== installed.metricsAddress)
      throw new Error(
        `this process's Temporal runtime is already installed ${installed.metricsAddress ? `with its metrics exporter on ${installed.metricsAddress}` : 'with no metrics exporter'}, so ${options.metricsSetting ?? 'the exporter'} (${options.metricsAddress}) cannot take effect: run the agent in a process of its own, or drop the setting`,
      );
    return;
  }
  installed = { ...(options.metricsAddress ? { metricsAddress: options.metricsAddress } : {}) };
  const level = (process.env.IRONFLOW_WORKER_LOG_LEVEL ?? 'WARN') as LogLevel;
  const print = new DefaultLogger(level);
  const logger = new DefaultLogger(level, (entry: LogEntry) => {
    if (entry.message !== EXPECTED) print.log(entry.level, entry.message, entry.meta);
  });
  try {
    Runtime.install({
      logger,
      // Seconds and `_total` counters, like the control plane's own metrics (services/metrics/registry.ts).
      ...(options.metricsAddress
        ? { telemetryOptions: { metrics: { prometheus: { bindAddress: options.metricsAddress, useSecondsForDurations: true, countersTotalSuffix: true } } } }
        : {}),
    });
  } catch (err) {
    if (!options.metricsAddress) throw err;
    throw new Error(
      `the Temporal SDK's metrics exporter cannot listen on ${options.metricsAddress} (${(err as Error).message}): set ${options.metricsSetting ?? 'its address'} to a free host:port`,
    );
  }
}
