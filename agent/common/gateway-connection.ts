// An agent's connection to Temporal: through the agent gateway only, with mTLS by the
// certificate Join issued. The gateway's certificate must chain to the node CA the agent
// joined with (the last certificate of its chain), so no other server can pose as it.
import type { KeyObject } from 'node:crypto';
import type { NativeConnection } from '@temporalio/worker';
import { IronflowError } from '../../core/errors';
import type { AgentTemporal } from '../../core/schemas/join';
import { installWorkerRuntime } from '../../worker/runtime';
import { connectWorker } from '../../worker/worker-connection';

export interface AgentCredentials {
  /** [leaf, …, node CA], PEM, as Join or renewal answered. */
  chain: string[];
  key: KeyObject;
}

export async function connectThroughGateway(temporal: AgentTemporal, credentials: AgentCredentials): Promise<NativeConnection> {
  const ca = credentials.chain[credentials.chain.length - 1];
  if (!ca || credentials.chain.length < 2) throw new IronflowError('INVALID_CONFIG', "the agent's certificate chain lacks the node CA; join again");
  installWorkerRuntime();
  return connectWorker({
    address: temporal.address,
    tls: {
      serverNameOverride: temporal.serverName,
      serverRootCACertificate: Buffer.from(ca),
      clientCertPair: { crt: Buffer.from(credentials.chain.join('')), key: Buffer.from(credentials.key.export({ format: 'pem', type: 'pkcs8' })) },
    },
  });
}

/**
 * Closes the connection and disables its AsyncLocalStorage. The SDK's worker runs each activity
 * inside that storage (to tie the worker client's calls to the activity's abort signal) and
 * leaves it enabled after the connection closes; on Node 20 every enabled storage, of a live
 * connection or not, is paid for on every promise the process makes. A process that connects
 * again and again then slows down with each connection: the emulated fleet's site process, one
 * connection per ramdisk boot, spent 43% of its CPU in that and 40% in the garbage collector
 * after 1,000 machines' commissioning (bench/README.md).
 */
export async function closeGatewayConnection(connection: NativeConnection): Promise<void> {
  try {
    await connection.close();
  } finally {
    connection.callContextStorage.disable();
  }
}
