// The control plane in one process: database (migrated), the agent gateway, the API, and
// the control-plane worker; with api.processes above 1, API processes beside it on the same
// port (stack/api-processes.ts). The dev stack and the integration tests both start it this way.
import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { defaultApiLog } from '../api/log-file';
import { buildServer, type ServerOptions } from '../api/server';
import { apiTlsMaterial } from '../services/api-tls';
import type { IronflowConfig } from '../services/config';
import type { Db } from '../services/db';
import { metricsRegistry } from '../services/metrics/registry';
import { loadOrCreateNodeCa } from '../services/pki/node-ca';
import { sealingCodecFor } from '../services/sealing';
import { temporalConnectionOptions } from '../services/temporal/connection-options';
import type { SecretStore } from '../services/secret-store';
import { startAgentGateway, type AgentGateway } from '../gateway/gateway-server';
import { startControlPlaneWorker, type ControlPlaneWorker } from '../worker/control-plane';
import { openApiDependencies } from './api-dependencies';
import { acceptOneConnectionAtATime, API_LISTEN_BACKLOG, startApiProcesses, type ApiProcesses } from './api-processes';
import { bootstrapRoot } from './bootstrap';
import { migrateDatabase } from './migrate';
import { tuneGarbageCollector } from './garbage-collector';

export interface ControlPlane {
  config: IronflowConfig;
  db: Db;
  temporal: Client;
  secrets: SecretStore;
  api: FastifyInstance;
  worker?: ControlPlaneWorker;
  /** The processes serving the API beside this one (api.processes above 1). */
  apiProcesses?: ApiProcesses;
  /** Where agents reach Temporal. */
  gateway: AgentGateway;
  rootCredential: { bearer: string; created: boolean; file: string };
  /** The API's base URL (the port is the one bound, which matters with port 0). */
  url: string;
  close(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Default: `info` into `<dataDir>/api.log` (api/log-file.ts); false for none. */
  logger?: ServerOptions['logger'];
  /** Start the control-plane worker in this process (default true). */
  worker?: boolean;
  migrate?: boolean;
}

export async function startControlPlane(config: IronflowConfig, options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  tuneGarbageCollector();
  const singleAccept = config.api.processes > 1 ? acceptOneConnectionAtATime() : undefined;
  const https = apiTlsMaterial(config); // checked before anything starts: a bad file is INVALID_CONFIG
  const temporalConnection = temporalConnectionOptions(config.temporal); // likewise temporal.tls's files
  if (options.migrate !== false) await migrateDatabase(config);
  const dependencies = await openApiDependencies(config, temporalConnection);
  const { db, secrets, temporal } = dependencies;
  const rootCredential = await bootstrapRoot(db, config.dataDir);
  const worker =
    options.worker === false ? undefined : await startControlPlaneWorker({ db, secrets, temporal, config, workerId: `${hostname()}:${process.pid}` });
  const nodeCa = await loadOrCreateNodeCa(db, secrets, config.dataDir);
  // Agents reach Temporal only through the gateway; it seals their payloads, so they hold no history key.
  const codec = sealingCodecFor(config);
  const gateway = await startAgentGateway({
    db,
    ca: nodeCa,
    temporal: temporalConnection,
    namespace: config.temporal.namespace,
    host: config.gateway.host,
    port: config.gateway.port,
    ...(codec ? { codec } : {}),
  });
  const agentGateway = { address: config.gateway.agentAddress ?? gateway.address, serverName: gateway.serverName };
  const logger = options.logger ?? defaultApiLog(config.dataDir);
  let apiProcesses: ApiProcesses | undefined;
  const processMetrics = () => apiProcesses?.metrics() ?? metricsRegistry.metrics();
  const workerSdkMetricsAddress = worker ? config.metrics.temporalSdkAddress : undefined;
  const api = await buildServer({ db, temporal, secrets, nodeCa, config, agentGateway, processMetrics, workerSdkMetricsAddress }, { logger, https });
  await api.listen({ host: config.api.host, port: config.api.port, backlog: API_LISTEN_BACKLOG });
  singleAccept?.keepFromLaterProcesses();
  if (config.api.processes > 1) {
    apiProcesses = await startApiProcesses({
      server: api.server,
      count: config.api.processes - 1,
      config,
      agentGateway,
      workerSdkMetricsAddress,
      // A test's log stream cannot cross to another process: theirs go to the data dir's api.log then.
      logger: logger && (logger.file ? { level: logger.level, file: logger.file } : defaultApiLog(config.dataDir, logger.level)),
      log: api.log,
    });
  }
  const address = api.server.address();
  const port = typeof address === 'object' && address ? address.port : config.api.port;
  return {
    config,
    db,
    temporal,
    secrets,
    api,
    worker,
    ...(apiProcesses ? { apiProcesses } : {}),
    gateway,
    rootCredential,
    url: `${https ? 'https' : 'http'}://${config.api.host}:${port}`,
    async close() {
      await apiProcesses?.close();
      await api.close();
      await gateway.close();
      await worker?.shutdown();
      await dependencies.close();
    },
  };
}
