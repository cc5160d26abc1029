// How Ironflow opens a Temporal worker connection (the control plane's worker to the frontend,
// every agent's through the agent gateway): as the SDK does, without gzip on the requests.
// Since SDK 1.24 the Rust core gzips every request by default. A worker's requests are small
// (a poll, a task's commands, a step's result or heartbeat); the control plane's worker's
// payloads are ciphertext with sealed histories, which does not compress. Yet the receiving end
// inflates each one: for agents, the agent gateway, inside the control-plane process that every
// machine of the fleet shares; for the control plane's worker, the Temporal server (bench/README.md,
// "gzip off on workers' requests").
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';

export function connectWorker(options: NativeConnectionOptions): Promise<NativeConnection> {
  return NativeConnection.connect({ ...options, grpcCompression: { codec: 'none' } });
}
