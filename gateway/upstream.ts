// The gateway's one connection to the Temporal frontend (loopback or the control plane's
// network): requests go through as bytes, with only the SDK's own metadata, never the
// agent's other headers.
import * as grpc from '@grpc/grpc-js';

const FORWARDED_METADATA = ['client-name', 'client-version', 'supported-server-versions', 'temporal-namespace'];
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const asBytes = (bytes: Buffer): Buffer => bytes;

interface UpstreamCall {
  cancel(): void;
}

export class TemporalUpstream {
  private readonly client: grpc.Client;

  constructor(address: string) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
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
