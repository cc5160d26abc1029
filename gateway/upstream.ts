// The gateway's one connection to the Temporal frontend (loopback or the control plane's
// network): requests go through as bytes, with only the SDK's own metadata, never the
// agent's other headers. With temporal.tls it is TLS with the control plane's client
// certificate, like every other control-plane connection (services/temporal/connection-options.ts).
import * as grpc from '@grpc/grpc-js';
import type { TemporalConnectionOptions, TemporalTls } from '../services/temporal/connection-options';

const FORWARDED_METADATA = ['client-name', 'client-version', 'supported-server-versions', 'temporal-namespace'];
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const asBytes = (bytes: Buffer): Buffer => bytes;

/** Plain gRPC without tls; otherwise TLS verified by the CA given (or the system's roots), with the client certificate if any. */
function credentialsFor(tls: TemporalTls | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.serverRootCACertificate ?? null, tls.clientCertPair?.key ?? null, tls.clientCertPair?.crt ?? null);
}

interface UpstreamCall {
  cancel(): void;
}

export class TemporalUpstream {
  private readonly client: grpc.Client;

  constructor(temporal: TemporalConnectionOptions) {
    this.client = new grpc.Client(temporal.address, credentialsFor(temporal.tls), {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      ...(temporal.tls?.serverNameOverride ? { 'grpc.ssl_target_name_override': temporal.tls.serverNameOverride } : {}),
    });
  }

  call(
    path: string,
    request: Uint8Array,
    from: grpc.Metadata,
    deadline: grpc.Deadline,
    done: (error: grpc.ServiceError | null, response?: Buffer) => void,
  ): UpstreamCall {
    const metadata = new grpc.Metadata();
    for (const key of FORWARDED_METADATA) for (const value of from.get(key)) metadata.add(key, value);
    return this.client.makeUnaryRequest(path, asBytes, asBytes, Buffer.from(request), metadata, { deadline }, (error, response) => done(error, response));
  }

  close(): void {
    this.client.close();
  }
}
