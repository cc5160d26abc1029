// The control plane in one process: database (migrated), the agent gateway, the API, and
// the control-plane worker. The dev stack and the integration tests both start it this way.
import { hostname } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { defaultApiLog } from '../api/log-file';
import { buildServer, type ServerOptions } from '../api/server';
import { apiTlsMaterial } from '../services/api-tls';
import type { IronflowConfig } from '../services/config';
import { databaseTarget } from '../core/database-target';
import { createDb, type Db } from '../services/db';
import { loadOrCreateNodeCa } from '../services/pki/node-ca';
import { sealedDataConverter, sealingCodecFor } from '../services/sealing';
import { temporalConnectionOptions } from '../services/temporal/connection-options';
import { loadSecretKey, SecretStore } from '../services/secret-store';
import { startAgentGateway, type AgentGateway } from '../gateway/gateway-server';
import { startControlPlaneWorker, type ControlPlaneWorker } from '../worker/control-plane';
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

/**
 * Connections the kernel holds for the API before it accepts them. Node's default (511) is
 * smaller than a fleet's burst: with 1,000 enrolls sent at once the queue overflowed while the
 * API was busy answering, the kernel dropped the handshakes past it (the clients' SYNs
 * retransmitted 1, 3, 7 s later, so the requests trickled in) and reset some after their
 * request was sent (read ECONNRESET). Queued, they wait their turn; Linux caps this at
 * net.core.somaxconn (4096 since 5.4).
 */
const API_LISTEN_BACKLOG = 4096;

export async function startControlPlane(config: IronflowConfig, options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  tuneGarbageCollector();
  const https = apiTlsMaterial(config); // checked before anything starts: a bad file is INVALID_CONFIG
  const temporalConnection = temporalConnectionOptions(config.temporal); // likewise temporal.tls's files
  if (options.migrate !== false) await migrateDatabase(config);
  const db = await createDb(databaseTarget(config));
  const secrets = new SecretStore(loadSecretKey(config.dataDir));
  const connection = await Connection.connect(temporalConnection);
  // Sealed histories (temporal.sealHistories): what this client writes Temporal stores as ciphertext.
  const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: sealedDataConverter(config) });
  const rootCredential = await bootstrapRoot(db, config.dataDir);
  const worker =
    options.worker === false ? undefined : await startControlPlaneWorker({ db, secrets, temporal, config, workerId: `${hostname()}:${process.pid}` });
  // Agents reach Temporal only through the gateway; it seals their payloads, so they hold no history key.
  const codec = sealingCodecFor(config);
  const gateway = await startAgentGateway({
    db,
    ca: await loadOrCreateNodeCa(db, secrets, config.dataDir),
    temporal: temporalConnection,
    namespace: config.temporal.namespace,
    host: config.gateway.host,
    port: config.gateway.port,
    ...(codec ? { codec } : {}),
  });
  const agentGateway = { address: config.gateway.agentAddress ?? gateway.address, serverName: gateway.serverName };
  const api = await buildServer({ db, temporal, secrets, config, agentGateway }, { logger: options.logger ?? defaultApiLog(config.dataDir), https });
  await api.listen({ host: config.api.host, port: config.api.port, backlog: API_LISTEN_BACKLOG });
  const address = api.server.address();
  const port = typeof address === 'object' && address ? address.port : config.api.port;
  return {
    config,
    db,
    temporal,
    secrets,
    api,
    worker,
    gateway,
    rootCredential,
    url: `${https ? 'https' : 'http'}://${config.api.host}:${port}`,
    async close() {
      await api.close();
      await gateway.close();
      await worker?.shutdown();
      await connection.close();
      await db.$disconnect();
    },
  };
}
