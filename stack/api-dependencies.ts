// What serving the API needs open, in whichever process serves it (the control plane's own, or
// one of its API processes: stack/api-processes.ts): the database, the secret store, and a
// Temporal client whose payloads are sealed (temporal.sealHistories).
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { databaseTarget } from '../core/database-target';
import type { IronflowConfig } from '../services/config';
import { createDb, type Db } from '../services/db';
import { sealedDataConverter } from '../services/sealing';
import { loadSecretKey, SecretStore } from '../services/secret-store';

export interface ApiDependencies {
  db: Db;
  secrets: SecretStore;
  temporal: Client;
  /** Closes the Temporal connection and the database. */
  close(): Promise<void>;
}

export async function openApiDependencies(config: IronflowConfig, temporalConnection: ConnectionOptions): Promise<ApiDependencies> {
  const db = await createDb(databaseTarget(config));
  const secrets = new SecretStore(loadSecretKey(config.dataDir));
  const connection = await Connection.connect(temporalConnection);
  // Sealed histories (temporal.sealHistories): what this client writes Temporal stores as ciphertext.
  const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: sealedDataConverter(config) });
  return {
    db,
    secrets,
    temporal,
    async close() {
      await connection.close();
      await db.$disconnect();
    },
  };
}
