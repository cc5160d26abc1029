// What route plugins are given: the database, Temporal, the secret store, the node CA, the settings.
import type { Client } from '@temporalio/client';
import type { IronflowConfig } from '../services/config';
import type { Db } from '../services/db';
import type { NodeCa } from '../services/pki/node-ca';
import type { SecretStore } from '../services/secret-store';

export interface ApiContext {
  db: Db;
  temporal: Client;
  secrets: SecretStore;
  config: IronflowConfig;
  /** The node CA, loaded once per process: Join, the agents' API and the agent gateway share it, and so the certificates it has verified. */
  nodeCa: NodeCa;
  /** What Join tells agents: the agent gateway's address (as agents reach it) and certificate name. */
  agentGateway: { address: string; serverName: string };
  /** The control plane's metrics (services/metrics/registry.ts) in Prometheus' text format, summed over the processes serving the API (stack/api-processes.ts). */
  processMetrics(): Promise<string>;
  /**
   * Where the control plane's own worker exports the Temporal SDK's metrics, which GET /metrics
   * appends; undefined when no worker runs beside the API (worker processes of their own serve
   * their own GET /metrics, metrics.workerAddress).
   */
  workerSdkMetricsAddress: string | undefined;
}
