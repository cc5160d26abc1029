// Hostile input on the unauthenticated routes (agents', join), through the real API: deep
// JSON, oversized bodies and URLs are refused before any parsing work with a 4xx, a code and
// a path (never a 500), security events stay bounded whatever the request carried, and each
// source gets a clear 429 once it has been refused too often, while other sources are served.
// Each test sends from its own loopback address, so the per-source limit of one never touches
// another.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAgentRequest } from '../../services/pki/agent-request';
import { MAX_DISCOVERED_ENTRIES } from '../../core/schemas/discovery';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { newKeyAndCsr, workDir } from '../helpers/openssl';

let t: TestControlPlane;
let siteId: string;
beforeAll(async () => {
  t = await startTestControlPlane();
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-1', idempotencyKey: 'hostile-site' })).id;
});
afterAll(async () => t?.close());

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { code: string; message: string; details: { path?: string; reason?: string } } } & Record<string, unknown>;
}

/** One request from a chosen loopback source address (the per-source limits key on it). */
function send(from: string, method: string, pathAndQuery: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(pathAndQuery, t.cp.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: from,
        headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Answer['body'] = {};
          try {
            parsed = JSON.parse(text) as Answer['body'];
          } catch {
            parsed = { text };
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

async function joinAgent(name: string): Promise<{ key: KeyObject; certificate: string }> {
  const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, name, 'ec');
  const joined = await t.anonymous.call<{ certificateChain: string[] }>('POST', '/v1/join', { token: minted.token, csr });
  return { key: createPrivateKey({ key: readFileSync(path.join(dir, `${name}.key`)) }), certificate: joined.certificateChain[0] as string };
}

describe('hostile bodies', () => {
  it('refuses deep JSON with INVALID_INPUT and a path, on agent, join and credentialed routes', async () => {
    for (const [route, body] of [
      ['/v1/agents/session', deepObject(5_000)],
      ['/v1/agents/bmc-access', deepArray(5_000)],
      ['/v1/join', deepObject(5_000)],
      ['/v1/join', `{"token":"x","csr":${deepArray(100)}}`],
    ] as const) {
      const res = await send('127.0.0.11', 'POST', route, body);
      expect(res.status, `${route}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error?.code).toBe('INVALID_INPUT');
      expect(res.body.error?.details.path).toBe('body');
    }
    const profile = await send('127.0.0.11', 'POST', '/v1/profiles', `{"tenantId":"root","document":${deepObject(5_000)}}`, {
      authorization: `Bearer ${t.cp.rootCredential.bearer}`,
    });
    expect(profile.status).toBe(400);
    expect(profile.body.error?.code).toBe('INVALID_INPUT');
    expect(profile.body.error?.details.path).toBe('body');
    // Brackets inside strings are text, not depth.
    const text = await send('127.0.0.11', 'POST', '/v1/join', JSON.stringify({ token: '['.repeat(5_000), csr: '{'.repeat(5_000) }));
    expect(text.body.error?.details.path).not.toBe('body');
  });

  it('refuses bodies over the route group limit, and a maximal heartbeat still fits', async () => {
    const big = JSON.stringify({ token: 'x'.repeat(100 * 1024), csr: 'y' });
    const res = await send('127.0.0.12', 'POST', '/v1/join', big);
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_INPUT');
    expect(res.body.error?.details.path).toBe('body');
    expect(res.body.error?.message).toMatch(/KiB/);
    // Sent in chunks, with no length to check up front: refused the same way as it streams in.
    const chunked = await send('127.0.0.12', 'POST', '/v1/join', big, { 'transfer-encoding': 'chunked' });
    expect(chunked.status).toBe(400);
    expect(chunked.body.error?.details.path).toBe('body');

    // The largest heartbeat a site agent sends: every bounded list full, every field at its longest.
    const agent = await joinAgent('maximal');
    const at = new Date().toISOString();
    const heartbeat = JSON.stringify({
      agentVersion: 'v'.repeat(64),
      hostname: 'h'.repeat(253),
      images: Array.from({ length: 1024 }, (_, i) => ({ sha256: i.toString(16).padStart(64, 'a'), state: 'pulling', sizeBytes: Number.MAX_SAFE_INTEGER })),
      siteStatus: { state: 'PROGRESSING', message: 'm'.repeat(512) },
      discovered: Array.from({ length: MAX_DISCOVERED_ENTRIES }, (_, i) => ({
        mac: `52:54:00:aa:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
        productUuid: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
        arch: 'a'.repeat(32),
        firstSeen: at,
        lastSeen: at,
        count: 2_147_483_647,
        relay: '255.255.255.254',
      })),
    });
    const headers = signAgentRequest(agent.key, agent.certificate, { method: 'POST', pathAndQuery: '/v1/agents/session', body: heartbeat });
    const beat = await send('127.0.0.12', 'POST', '/v1/agents/session', heartbeat, headers);
    expect(beat.status, JSON.stringify(beat.body.error)).toBe(200);
  });

  it('keeps security events bounded whatever the URL carried', async () => {
    const before = await t.cp.db.event.count({ where: { tenantId: 'root' } });
    // Too long a URL is refused before routing: no event at all.
    const huge = await send('127.0.0.13', 'POST', `/v1/join?pad=${'q'.repeat(12 * 1024)}`, '{"token":1}');
    expect(huge.status).toBe(400);
    expect(huge.body.error?.code).toBe('INVALID_INPUT');
    expect(huge.body.error?.details.path).toBe('url');
    expect(await t.cp.db.event.count({ where: { tenantId: 'root' } })).toBe(before);

    // A refused join whose URL is within the limit: its event is small however long the URL was.
    for (let i = 0; i < 5; i++) {
      const refused = await send('127.0.0.13', 'POST', `/v1/join?pad=${'q'.repeat(1_900)}`, '{"token":1}');
      expect(refused.status).toBe(400);
    }
    const events = await t.cp.db.event.findMany({ where: { tenantId: 'root', type: 'security.join.refused' } });
    expect(events.length).toBeGreaterThanOrEqual(5);
    for (const event of events) expect(JSON.stringify(event.data).length).toBeLessThan(600);
  });

  it('answers 429 RATE_LIMITED to a source refused too often, and still serves another source', async () => {
    const statuses: number[] = [];
    let limited: Answer | undefined;
    // Ten at a time: well past the burst even on a slow machine, where the bucket refills as it goes.
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send('127.0.0.14', 'POST', '/v1/join', JSON.stringify({ token: `ifj_guess${batch}_${i}`, csr: 'not a csr' }))),
      );
      for (const res of answers) {
        statuses.push(res.status);
        if (res.status === 429) limited ??= res;
      }
    }
    expect(statuses.slice(0, 10).every((s) => s === 400 || s === 401)).toBe(true);
    expect(statuses.slice(-10).every((s) => s === 429)).toBe(true);
    expect(limited?.body.error?.code).toBe('RATE_LIMITED');
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThan(0);
    // Limited requests write no events: the log grows by the refusals before the limit only.
    const events = await t.cp.db.event.count({ where: { type: 'security.join.refused' } });
    await send('127.0.0.14', 'POST', '/v1/join', JSON.stringify({ token: 'ifj_more', csr: 'x' }));
    expect(await t.cp.db.event.count({ where: { type: 'security.join.refused' } })).toBe(events);
    // A limited source is refused on the agent routes as well, before any signature work.
    expect((await send('127.0.0.14', 'POST', '/v1/agents/session', '{}')).status).toBe(429);
    // Another source is unaffected: a good join works.
    const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
    const csr = newKeyAndCsr(workDir(), 'other-source', 'ec');
    const good = await send('127.0.0.15', 'POST', '/v1/join', JSON.stringify({ token: minted.token, csr }));
    expect(good.status, JSON.stringify(good.body.error)).toBe(201);
    // Routes for operators are not limited by it.
    expect((await send('127.0.0.14', 'GET', '/healthz')).status).toBe(200);
  });

  it('keeps /healthz answering while 8 clients send deep bodies', async () => {
    let stop = false;
    const clients = Array.from({ length: 8 }, async (_, i) => {
      let sent = 0;
      while (!stop) {
        await send(`127.0.1.${i + 1}`, 'POST', '/v1/agents/session', deepObject(5_000));
        sent++;
      }
      return sent;
    });
    const health: number[] = [];
    for (let i = 0; i < 5; i++) health.push((await send('127.0.0.16', 'GET', '/healthz')).status);
    stop = true;
    const sent = await Promise.all(clients);
    expect(health.every((s) => s === 200)).toBe(true);
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // The server is still up for the deep bodies' senders' neighbours.
    expect((await send('127.0.0.16', 'GET', '/v1/join/ca')).status).toBe(200);
  });
});
