// The ramdisk's and the site cache's image source (agent/ramdisk/image-source.ts) against a
// real HTTP origin on loopback that drops connections and answers busy: what may pass is
// asked again, backing off, and what will not (a 404) is the answer at once. And an HTTPS
// origin whose certificate only a site's extra CA vouches for.
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openImageSource } from '../../agent/ramdisk/image-source';
import { makeServerCertificate } from '../helpers/tls';

const IMAGE = Buffer.from('an image, byte for byte');
/** How the origin treats each next request, in order; after the list, it serves the image. */
let plan: Array<'reset' | 503 | 404> = [];
let requests = 0;
let origin: http.Server;
let url: string;

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    requests++;
    const next = plan.shift();
    if (next === 'reset') return void req.socket.destroy();
    if (next !== undefined) return void res.writeHead(next).end();
    res.writeHead(200, { 'content-length': IMAGE.length }).end(IMAGE);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/os.raw`;
});

afterAll(async () => {
  origin.closeAllConnections();
  await new Promise((resolve) => origin.close(resolve));
});

async function read(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe('openImageSource', () => {
  it('asks again after dropped connections and busy answers, and streams the image', async () => {
    plan = ['reset', 503, 'reset'];
    requests = 0;
    expect(await read(await openImageSource(url))).toEqual(IMAGE);
    expect(requests).toBe(4);
  });

  it('answers a 404 at once: it will not pass', async () => {
    plan = [404];
    requests = 0;
    await expect(openImageSource(url)).rejects.toMatchObject({ code: 'DRIVER_ERROR', message: 'the image source answered 404' });
    expect(requests).toBe(1);
  });

  it('gives up after four tries of an origin that keeps dropping the connection, naming it', async () => {
    plan = ['reset', 'reset', 'reset', 'reset', 'reset'];
    requests = 0;
    await expect(openImageSource(url)).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      message: expect.stringMatching(/^the image source http:\/\/127\.0\.0\.1:\d+ did not answer: /),
    });
    expect(requests).toBe(4);
    plan = [];
  }, 20_000);

  it('asks only once when told to (the site cache, which falls back to the source at once)', async () => {
    plan = ['reset'];
    requests = 0;
    await expect(openImageSource(url, [], 1)).rejects.toMatchObject({ code: 'DRIVER_ERROR' });
    expect(requests).toBe(1);
  });

  it('trusts an HTTPS origin through the extra CAs it is given, and only those', async () => {
    const certificates = (name: string) => makeServerCertificate(mkdtempSync(path.join(inject('runDir'), `image-source-${name}-`)), `images.${name}`);
    const site = certificates('site');
    const other = certificates('other');
    const server = https.createServer({ cert: readFileSync(site.certFile), key: readFileSync(site.keyFile) }, (_req, res) =>
      res.writeHead(200, { 'content-length': IMAGE.length }).end(IMAGE),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const secure = `https://127.0.0.1:${(server.address() as AddressInfo).port}/os.raw`;
    try {
      expect(await read(await openImageSource(secure, [site.caPem], 1))).toEqual(IMAGE);
      // Another CA (the trust store is kept per list of CAs): refused, as with none.
      await expect(openImageSource(secure, [other.caPem], 1)).rejects.toMatchObject({ code: 'DRIVER_ERROR', details: { reason: 'source-unreachable' } });
      await expect(openImageSource(secure, [], 1)).rejects.toMatchObject({ code: 'DRIVER_ERROR', details: { reason: 'source-unreachable' } });
      expect(await read(await openImageSource(secure, [site.caPem], 1))).toEqual(IMAGE);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
