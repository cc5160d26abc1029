// Workers' connections send their requests uncompressed (worker/worker-connection.ts): the
// headers of the first request a real SDK connection makes (GetSystemInfo, when it connects),
// read by a plain HTTP/2 listener on loopback that stands where the frontend would be.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { NativeConnection } from '@temporalio/worker';
import { afterEach, describe, expect, it } from 'vitest';
import { connectWorker } from '../../worker/worker-connection';
import { installWorkerRuntime } from '../../worker/runtime';

/** The request headers of the first call `connect` makes to a listener that answers every call UNAVAILABLE. */
async function firstRequestHeaders(connect: (address: string) => Promise<NativeConnection>): Promise<http2.IncomingHttpHeaders> {
  const server = http2.createServer();
  const seen = new Promise<http2.IncomingHttpHeaders>((resolve) =>
    server.on('stream', (stream, headers) => {
      resolve(headers);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'test listener' }, { endStream: true });
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const connecting = connect(`127.0.0.1:${port}`).then(
    (connection) => connection.close(),
    () => undefined,
  );
  const headers = await seen;
  await connecting;
  return headers;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('connectWorker', () => {
  installWorkerRuntime();

  it('sends requests without gzip, where the SDK on its own gzips them', async () => {
    const ours = await firstRequestHeaders((address) => connectWorker({ address }));
    expect(ours[':path']).toBe('/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo');
    expect(ours['grpc-encoding'] ?? 'identity').toBe('identity');
    // The SDK's default, so this test fails if connectWorker stops making a difference.
    const sdkDefault = await firstRequestHeaders((address) => NativeConnection.connect({ address }));
    expect(sdkDefault['grpc-encoding']).toBe('gzip');
  });
});
