// The API clients' TLS fetch (services/trusted-fetch.ts) against real https servers on loopback
// with a throwaway CA: what it sends, the cap on an answer's size (a hostile or broken
// server cannot exhaust an agent's memory), and a pin with a server that sends only its leaf.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { spkiPinOf } from '../../services/ca-pin';
import { trustedFetch } from '../../services/trusted-fetch';
import { makeServerCertificate, type TestCertificates } from '../helpers/tls';

let certs: TestCertificates;
const servers: https.Server[] = [];

async function serve(certFile: string, handler: RequestListener): Promise<string> {
  const server = https.createServer({ cert: readFileSync(certFile), key: readFileSync(certs.keyFile) }, handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(() => {
  certs = makeServerCertificate(mkdtempSync(path.join(inject('runDir'), 'fetch-tls-')), 'api.test');
});
afterAll(() => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

describe('trustedFetch', () => {
  it('sends the method, headers and body, and answers status, headers and body', async () => {
    const url = await serve(certs.chainFile, (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () =>
        res
          .writeHead(201, { 'content-type': 'application/json', 'x-seen': `${req.method} ${req.headers['x-test']}` })
          .end(JSON.stringify({ echoed: JSON.parse(body) })),
      );
    });
    const response = await trustedFetch({ caPems: [certs.caPem] })(`${url}/x`, {
      method: 'POST',
      headers: { 'x-test': 'yes', 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1 }),
    });
    expect(response.status).toBe(201);
    expect(response.headers['x-seen']).toBe('POST yes');
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({ echoed: { a: 1 } });
  });

  it('with no CA, plain http: one kept-alive connection carries request after request', async () => {
    const server = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })));
    let connections = 0;
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new ControlPlaneClient(url);
      for (const n of [1, 2, 3]) expect(await client.get(`/n${n}`)).toEqual({ path: `/n${n}` });
      expect(connections).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses an answer larger than 16 MiB', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const url = await serve(certs.chainFile, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      // 20 MiB, written as the socket drains.
      const more = (): void => {
        while (sent < 20) {
          sent += 1;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    await expect(new ControlPlaneClient(url, 10_000, { caPems: [certs.caPem] }).get('/big')).rejects.toThrow(/larger than 16777216 bytes/);
  });

  it('a pin against a server that sends only its leaf: refused, naming the fix', async () => {
    const url = await serve(certs.certFile, (_req, res) => res.end('{}'));
    await expect(new ControlPlaneClient(url, 5_000, { caPin: spkiPinOf(certs.caPem) }).get('/v1/join/ca')).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: expect.stringContaining('serve the full chain (api.tls certFile with its CA)'),
    });
  });

  it('a CA for a plain http URL is a configuration error, not a silent downgrade', async () => {
    await expect(trustedFetch({ caPems: [certs.caPem] })('http://127.0.0.1:9/x', { method: 'GET' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      details: { reason: 'ca-without-https' },
    });
  });
});
