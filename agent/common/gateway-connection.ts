// An agent's connection to Temporal: through the agent gateway only, with mTLS by the
// certificate Join issued. The gateway's certificate must chain to the node CA the agent
// joined with (the last certificate of its chain), so no other server can pose as it.
import { AsyncLocalStorage } from 'node:async_hooks';
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

/**
 * The call-context storage every agent connection of this process shares. The SDK gives each
 * connection a storage of its own, and its worker runs each activity inside it (to tie the
 * worker client's calls to the activity's abort signal), which enables it for good. On Node 20
 * every enabled storage is paid for on every promise the process makes, the storage of a closed
 * connection too: a process hosting many agents (the emulated fleet's site process, a ramdisk
 * connection per machine boot) paid on each promise once per connection it ever ran an activity
 * on (bench/README.md, "The fleet"). One shared storage is one cost, however many connections.
 * A store belongs to an async chain, not to a storage, so a call still reads its own chain's
 * deadline and signal: only a call on one connection made inside another's context would see
 * that context, and no agent calls another agent's connection.
 */
const agentCallContext: NativeConnection['callContextStorage'] = new AsyncLocalStorage();

/** The connection, using the process's one agent call-context storage instead of its own. */
export function sharingCallContext(connection: NativeConnection): NativeConnection {
  connection.callContextStorage.disable(); // its own, should connecting have used it
  Object.defineProperty(connection, 'callContextStorage', { value: agentCallContext });
  return connection;
}

export async function connectThroughGateway(temporal: AgentTemporal, credentials: AgentCredentials): Promise<NativeConnection> {
  const ca = credentials.chain[credentials.chain.length - 1];
  if (!ca || credentials.chain.length < 2) throw new IronflowError('INVALID_CONFIG', "the agent's certificate chain lacks the node CA; join again");
  installWorkerRuntime();
  const connection = await connectWorker({
    address: temporal.address,
    tls: {
      serverNameOverride: temporal.serverName,
      serverRootCACertificate: Buffer.from(ca),
      clientCertPair: { crt: Buffer.from(credentials.chain.join('')), key: Buffer.from(credentials.key.export({ format: 'pem', type: 'pkcs8' })) },
    },
  });
  return sharingCallContext(connection);
}
