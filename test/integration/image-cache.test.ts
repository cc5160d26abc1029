// The site agent's image cache as components over real sockets and files: the puller pulls
// from a real origin into data_dir/cache, a copy whose bytes do not match is never visible
// and the status names the image; the boot server's /cache route serves only under a live
// grant (503 for a boot grant while not holding the lease, 404 for anything else), with byte
// ranges; LRU eviction under cache_max_bytes never evicts a named or pinned image; the store
// keeps its copies and LRU order across a restart.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { cacheRoute } from '../../agent/boot/http/cache-route';
import { startBootHttpServer, type BootHttpServer } from '../../agent/boot/http/server';
import { SiteImageCache } from '../../agent/cache';
import { chooseEvictions } from '../../agent/cache/eviction';
import { CacheGrants, MAX_GRANTS } from '../../agent/cache/grants';
import { ImageCacheStore } from '../../agent/cache/store';
import { AgentLog } from '../../agent/common/log';
import { until } from '../helpers/boot-site';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const log = new AgentLog(() => undefined);
const good = randomBytes(200_000);
const other = randomBytes(50_000);
const liar = randomBytes(10_000); // served under a digest it does not have
const liarClaims = sha(randomBytes(8));
let held: (() => void) | undefined;
const requests: string[] = [];
let origin: http.Server;
let originUrl: string;

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const send = (body: Buffer) => res.writeHead(200, { 'content-length': body.length }).end(body);
    if (req.url === '/good.raw') return send(good);
    if (req.url === '/other.raw') return send(other);
    if (req.url === '/liar.raw') return send(liar);
    if (req.url === '/slow.raw') return void (held = () => send(other));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});
afterAll(() => origin?.close());

const tempDir = () => mkdtempSync(path.join(inject('runDir'), 'image-cache-'));

describe('puller and store', () => {
  it('caches a verified copy; a copy whose bytes do not match is never visible and the status names the image', async () => {
    const cache = new SiteImageCache({ dir: tempDir(), log });
    cache.want(
      [
        { url: `${originUrl}/good.raw`, sha256: sha(good), format: 'raw' },
        { url: `${originUrl}/liar.raw?X-Signature=secret`, sha256: liarClaims, format: 'raw' },
      ],
      [],
    );
    expect(cache.report().status.state).toBe('PROGRESSING');
    await cache.puller.idle();
    expect(cache.store.has(sha(good))).toBe(true);
    expect(cache.store.has(liarClaims)).toBe(false);
    // Only the verified copy and the index: no file under the lying digest, no temp file left.
    expect(readdirSync(cache.store.dir).sort()).toEqual([sha(good), 'index.json'].sort());
    const { status, images } = cache.report();
    expect(status.state).toBe('FAILED');
    expect(status.message).toContain(`${originUrl}/liar.raw`);
    expect(status.message).toContain(liarClaims);
    expect(status.message).not.toContain('secret'); // a presigned query never reaches a status or log
    expect(images).toEqual(
      [
        { sha256: sha(good), state: 'ready', sizeBytes: good.length },
        { sha256: liarClaims, state: 'failed', sizeBytes: 0 },
      ].sort((a, b) => a.sha256.localeCompare(b.sha256)),
    );
    // Once the site stops naming it, the failure goes and the section is ready.
    cache.want([{ url: `${originUrl}/good.raw`, sha256: sha(good), format: 'raw' }], []);
    expect(cache.report().status).toMatchObject({ state: 'READY' });
  });

  it('stays PROGRESSING while an image warms, and reports it pulling', async () => {
    const cache = new SiteImageCache({ dir: tempDir(), log });
    cache.want([{ url: `${originUrl}/slow.raw`, sha256: sha(other), format: 'raw' }], []);
    await until('the origin to hold the request', () => held !== undefined);
    expect(cache.report().status.state).toBe('PROGRESSING');
    expect(cache.report().images).toEqual([{ sha256: sha(other), state: 'pulling', sizeBytes: 0 }]);
    held?.();
    await cache.puller.idle();
    expect(cache.report().status.state).toBe('READY');
  });

  it('keeps its copies and their LRU order across a restart, and drops a crashed pull', async () => {
    const dir = tempDir();
    const first = new ImageCacheStore(dir);
    const { Readable } = await import('node:stream');
    await first.ingest(sha(good), Readable.from([good]));
    await first.ingest(sha(other), Readable.from([other]));
    first.touch(sha(good), Date.now() + 10_000); // past the index's write interval: persisted
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(dir, `.partial-${sha(liar)}-0000`), liar);
    const second = new ImageCacheStore(dir);
    expect(
      second
        .list()
        .map((c) => c.sha256)
        .sort(),
    ).toEqual([sha(good), sha(other)].sort());
    expect(second.get(sha(good))?.lastUsedAt).toBeGreaterThan(second.get(sha(other))?.lastUsedAt ?? Infinity);
    expect(existsSync(path.join(dir, `.partial-${sha(liar)}-0000`))).toBe(false);
  });
});

describe('eviction under cache_max_bytes', () => {
  const copy = (n: number, sizeBytes: number, lastUsedAt: number) => ({ sha256: n.toString(16).padStart(64, '0'), sizeBytes, lastUsedAt });

  it('takes least recently used first and never a named or pinned digest, even when over budget', () => {
    const copies = [copy(1, 100, 10), copy(2, 100, 20), copy(3, 100, 30), copy(4, 100, 40)];
    expect(chooseEvictions(copies, 400, new Set()).map((c) => c.sha256)).toEqual([]);
    expect(chooseEvictions(copies, 250, new Set()).map((c) => c.lastUsedAt)).toEqual([10, 20]);
    // 1 is named (pre-warm), 2 pinned by a deploy: 3 goes first, then 4, and the spared ones stay even over budget.
    const spared = new Set([copy(1, 0, 0).sha256, copy(2, 0, 0).sha256]);
    expect(chooseEvictions(copies, 300, spared).map((c) => c.lastUsedAt)).toEqual([30]);
    expect(chooseEvictions(copies, 0, spared).map((c) => c.lastUsedAt)).toEqual([30, 40]);
  });

  it('each pass trims the store itself: a pinned image outlives newer unpinned ones', async () => {
    const cache = new SiteImageCache({ dir: tempDir(), log, maxBytes: good.length + other.length - 1 });
    const goodImage = { url: `${originUrl}/good.raw`, sha256: sha(good), format: 'raw' };
    const otherImage = { url: `${originUrl}/other.raw`, sha256: sha(other), format: 'raw' };
    cache.want([goodImage], []);
    await cache.puller.idle();
    // good is no longer named but a deploy pins it; other is named: both exceed the budget, neither goes.
    cache.want([otherImage], [sha(good)]);
    await cache.puller.idle();
    expect(cache.store.has(sha(good)) && cache.store.has(sha(other))).toBe(true);
    // The pin ends: good (least recently used, unnamed) is evicted on the next pass.
    cache.want([otherImage], []);
    expect(cache.store.has(sha(good))).toBe(false);
    expect(cache.store.has(sha(other))).toBe(true);
    expect(cache.report().images.map((i) => i.sha256)).toEqual([sha(other)]);
  });
});

describe('GET /cache/t/<grant>/<sha256>', () => {
  let server: BootHttpServer;
  let cache: SiteImageCache;
  let holdsLease = true;
  const entry = { mac: '02:00:00:00:00:01', workflowId: 'wf-1', notAfter: new Date(Date.now() + 3_600_000).toISOString() };

  beforeAll(async () => {
    cache = new SiteImageCache({ dir: tempDir(), log });
    cache.want(
      [
        { url: `${originUrl}/good.raw`, sha256: sha(good), format: 'raw' },
        { url: `${originUrl}/other.raw`, sha256: sha(other), format: 'raw' },
      ],
      [],
    );
    await cache.puller.idle();
    server = await startBootHttpServer({
      address: '127.0.0.1',
      port: 0,
      routes: [cacheRoute({ store: cache.store, grants: cache.grants, holdsLease: () => holdsLease, log })],
      log,
    });
  });
  afterAll(async () => server?.close());

  const get = (p: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: Buffer; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      http
        .get(`${server.url}${p}`, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
        })
        .on('error', reject);
    });

  it('serves any cached digest under a live boot grant, whole or a byte range', async () => {
    const grant = cache.grants.bootGrant(entry);
    expect(grant).toMatch(/^[0-9a-f]{32}$/);
    expect(cache.grants.bootGrant(entry)).toBe(grant); // the same entry, the same URL
    const whole = await get(`/cache/t/${grant}/${sha(good)}`);
    expect(whole.status).toBe(200);
    expect(sha(whole.body)).toBe(sha(good));
    expect(whole.headers['accept-ranges']).toBe('bytes');
    const range = await get(`/cache/t/${grant}/${sha(good)}`, { range: 'bytes=1000-1999' });
    expect(range.status).toBe(206);
    expect(range.headers['content-range']).toBe(`bytes 1000-1999/${good.length}`);
    expect(range.body.equals(good.subarray(1000, 2000))).toBe(true);
    const tail = await get(`/cache/t/${grant}/${sha(good)}`, { range: 'bytes=-10' });
    expect(tail.body.equals(good.subarray(good.length - 10))).toBe(true);
    expect((await get(`/cache/t/${grant}/${sha(good)}`, { range: `bytes=${good.length}-` })).status).toBe(416);
    expect((await get(`/cache/t/${grant}/${sha(other)}`)).status).toBe(200);
  });

  it('answers a boot grant with 503 while this agent does not hold the boot lease', async () => {
    const grant = cache.grants.bootGrant(entry);
    holdsLease = false;
    try {
      expect((await get(`/cache/t/${grant}/${sha(good)}`)).status).toBe(503);
      // A firmware grant does not depend on the lease.
      expect((await get(`/cache/t/${cache.grants.firmwareGrant(sha(good))}/${sha(good)}`)).status).toBe(200);
    } finally {
      holdsLease = true;
    }
  });

  it('is 404 for anything else: /cache/, malformed paths, unknown or lapsed grants, other digests, uncached digests', async () => {
    const grant = cache.grants.bootGrant(entry);
    const lapsed = cache.grants.bootGrant({ ...entry, notAfter: new Date(Date.now() - 1000).toISOString() });
    const firmware = cache.grants.firmwareGrant(sha(good));
    const sanboot = cache.grants.bootGrant(entry, sha(other));
    for (const p of [
      '/cache/',
      '/cache',
      `/cache/${sha(good)}`,
      `/cache/t/${sha(good)}`,
      `/cache/t/${grant}`,
      `/cache/t/${grant}/`,
      `/cache/t/${grant}/${sha(good)}/x`,
      `/cache/t/${grant.toUpperCase()}/${sha(good)}`,
      `/cache/t/${randomBytes(16).toString('hex')}/${sha(good)}`,
      `/cache/t/${lapsed}/${sha(good)}`,
      `/cache/t/${firmware}/${sha(other)}`,
      `/cache/t/${sanboot}/${sha(good)}`,
      `/cache/t/${grant}/${sha(liar)}`,
      `/cache/t/${grant}/../index.json`,
      '/cache/index.json',
    ]) {
      expect([p, (await get(p)).status]).toEqual([p, 404]);
    }
    expect((await get(`/cache/t/${sanboot}/${sha(other)}`)).status).toBe(200);
  });

  it('keeps at most MAX_GRANTS grants, dropping lapsed ones first, then the oldest', () => {
    const grants = new CacheGrants(3);
    const old = grants.firmwareGrant(sha(good), 0); // lapsed by now
    const a = grants.firmwareGrant(sha(good));
    const b = grants.firmwareGrant(sha(good));
    const c = grants.firmwareGrant(sha(good));
    expect(grants.size()).toBe(3);
    expect(grants.decide(old, sha(good), true)).toBe('not-found');
    grants.firmwareGrant(sha(good));
    expect(grants.decide(a, sha(good), true)).toBe('not-found');
    expect([b, c].map((g) => grants.decide(g, sha(good), true))).toEqual(['serve', 'serve']);
    expect(MAX_GRANTS).toBeLessThanOrEqual(4096);
  });

  it('answers 503 past its transfers at once, and serves again once one ends', async () => {
    const big = randomBytes(32 * 1024 * 1024);
    const { Readable } = await import('node:stream');
    const store = new ImageCacheStore(tempDir());
    await store.ingest(sha(big), Readable.from([big]));
    const grants = new CacheGrants();
    const capped = await startBootHttpServer({
      address: '127.0.0.1',
      port: 0,
      routes: [cacheRoute({ store, grants, holdsLease: () => true, log, maxTransfers: 1 })],
      log,
    });
    try {
      const url = `${capped.url}/cache/t/${grants.firmwareGrant(sha(big))}/${sha(big)}`;
      // One transfer held open: the client reads nothing, so the server cannot finish.
      const held = await new Promise<http.IncomingMessage>((resolve) => http.get(url, resolve));
      held.pause();
      const second = await new Promise<number>((resolve) =>
        http.get(url, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }),
      );
      expect(second).toBe(503);
      held.resume();
      await new Promise((r) => held.on('end', r));
      // The server counts the transfer done just after the client saw its end.
      const statusOf = () =>
        new Promise<number>((resolve) =>
          http.get(url, { headers: { range: 'bytes=0-0' } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          }),
        );
      await until('a transfer to be served again', async () => (await statusOf()) === 206, 5_000);
    } finally {
      await capped.close();
    }
  });
});
