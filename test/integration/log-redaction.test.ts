// Structured logs: one line per request, with its request id, and never a bearer or a secret
// from a request.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
const lines: string[] = [];
beforeAll(async () => {
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  t = await startTestControlPlane({ worker: false, logger: { level: 'debug', stream } });
});
afterAll(async () => t?.close());

describe('request logs', () => {
  it('redact the Authorization header and carry the request id', async () => {
    const res = await t.root.request('GET', '/v1/events?tenantId=root', undefined, { 'x-request-id': 'req-redaction-1' });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    // One line for the request, written when it was answered.
    const mine = lines.filter((l) => l.includes('req-redaction-1')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(mine).toEqual([
      expect.objectContaining({
        reqId: 'req-redaction-1',
        msg: 'request completed',
        req: expect.objectContaining({ method: 'GET', url: '/v1/events?tenantId=root' }),
        res: { statusCode: 200 },
        responseTime: expect.any(Number),
      }),
    ]);
    const bearerSecret = t.cp.rootCredential.bearer.split('.')[1] as string;
    expect(lines.join('\n')).not.toContain(bearerSecret);
  });

  it('keep a created credential out of the log', async () => {
    const created = await t.root.call<{ credential: string }>('POST', '/v1/credentials', {
      tenantId: 'root',
      name: 'ci',
      permissions: ['compute:events:read'],
    });
    await new Promise((r) => setTimeout(r, 50));
    // The request was logged: the check below reads a log that has the request in it.
    expect(lines.some((l) => l.includes('/v1/credentials'))).toBe(true);
    expect(lines.join('\n')).not.toContain(created.credential.split('.')[1]);
  });
});
