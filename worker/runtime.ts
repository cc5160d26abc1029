// The Temporal worker runtime of this process, with our log level (WARN unless
// IRONFLOW_WORKER_LOG_LEVEL says otherwise) and, for the control plane, the SDK's worker
// metrics exported for Prometheus. Must run before the first worker or connection.
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';

/** Agents' workers are activity-only by design: this warning says nothing to an operator. */
const EXPECTED = 'No workflows registered, not polling for workflow tasks';

let installed = false;

export function installWorkerRuntime(options: { metricsAddress?: string } = {}): void {
  if (installed) return;
  installed = true;
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
      `the Temporal SDK's metrics exporter cannot listen on ${options.metricsAddress} (${(err as Error).message}): set metrics.temporalSdkAddress in temporal-dev.yaml or IRONFLOW_METRICS_SDK_ADDRESS to a free host:port, or to off`,
    );
  }
}
