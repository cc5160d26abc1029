// What control-plane activities are given. Activities are the only workflow code that
// touches the database, the secret store or the network.
import type { Client } from '@temporalio/client';
import type { IronflowConfig } from '../services/config';
import type { Db } from '../services/db';
import type { SecretStore } from '../services/secret-store';

export interface ActivityDeps {
  db: Db;
  secrets: SecretStore;
  temporal: Client;
  config: IronflowConfig;
  /** Names this worker process in results (the wiring check reports who ran it). */
  workerId: string;
}
