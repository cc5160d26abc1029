// What the control plane's process and its API processes (stack/api-processes.ts,
// stack/api-process.ts) say to each other over their IPC channel.
import type { Registry } from 'prom-client';
import type { ApiContext } from '../api/context';
import type { IronflowConfig } from '../services/config';

/** One process's metrics, as prom-client's `getMetricsAsJSON` gives them (what `AggregatorRegistry.aggregate` sums). */
export type ProcessMetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export type ToApiProcess =
  /** Make ready to serve the API with these settings, then ask for the listening socket. */
  | {
      kind: 'serve';
      config: IronflowConfig;
      agentGateway: ApiContext['agentGateway'];
      workerSdkMetricsAddress: ApiContext['workerSdkMetricsAddress'];
      logger: false | { level: string; file: string };
    }
  /**
   * Serve on the listening socket sent with this message. Node listens on a socket it receives
   * at once, with nobody to answer the connections it accepts: the API process asks for it only
   * once its server is ready, and takes it over in the same tick.
   */
  | { kind: 'listen' }
  /** Answer with this process's metrics. */
  | { kind: 'metrics'; id: number }
  /** The metrics of every process serving the API, as asked for with `id`. */
  | { kind: 'all-metrics'; id: number; text: string };

export type FromApiProcess =
  /** Ready to serve: the listening socket, please. */
  | { kind: 'awaiting-socket' }
  /** Serving on it. */
  | { kind: 'ready' }
  | { kind: 'metrics'; id: number; metrics: ProcessMetricsJson }
  /** A scrape of GET /metrics reached this process: the metrics of every process serving the API, please. */
  | { kind: 'all-metrics'; id: number };
