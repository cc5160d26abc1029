// Brute force is bounded per source (issue 13): guessed join tokens (POST /v1/join), guessed
// API credentials (a bearer of a real credential id with a wrong secret, on the API and at the
// console's sign-in) and guessed boot-server paths (MACs without a boot entry, cache grants)
// each earn a clear 429 RATE_LIMITED with a retry-after once the source has been refused too
// often, while good requests from another source still pass. A limited source is refused even
// with a right guess, so the answer tells a guesser nothing. Requests carrying no credential
// guess nothing and are never limited. Counts only: no timing is asserted (each source sends
// its guesses in batches, well past the burst even if the bucket refills as it goes). And
// what refusals cost the event log: a refused join's event names the route, never the
// caller's query string, however long it was.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOT_REFUSAL_LIMITS } from '../../agent/boot/http/server';
import type { SiteAgent } from '../../agent/site/main';
import { REFUSAL_LIMITS } from '../../api/rate-limit';
import { activeAgent, startBootSite, type BootSite } from '../helpers/boot-site';
import { newKeyAndCsr, workDir } from '../helpers/openssl';

/** This file's sources: 127.0.5.<n>, one per test, so no test's limit touches another's. */
const source = (n: number) => `127.0.5.${n}`;

let site: BootSite;
let agent: SiteAgent;

beforeAll(async () => {
  site = await startBootSite('brute-force-site');
  agent = await site.startAgent();
  await activeAgent(agent);
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await site?.t.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(
  from: string,
  base: string,
  method: string,
  pathAndQuery: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const url = new URL(pathAndQuery, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, localAddress: from, headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const api = (from: string, method: string, path: string, options: { body?: unknown; bearer?: string; headers?: Record<string, string> } = {}) =>
  send(from, site.t.cp.url, method, path, {
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
      ...options.headers,
    },
  });

const errorOf = (answer: Answer) => (JSON.parse(answer.text) as { error?: { code: string; details: { retryAfterSeconds?: number } } }).error;

/**
 * Sends `total` guesses, `batch` at a time, and answers every status in order plus the first
 * 429. Past the burst by twice over: even a slow machine, refilling as it goes, runs dry.
 */
async function guess(total: number, batch: number, one: (i: number) => Promise<Answer>): Promise<{ statuses: number[]; limited: Answer | undefined }> {
  const statuses: number[] = [];
  let limited: Answer | undefined;
  for (let start = 0; start < total; start += batch) {
    const answers = await Promise.all(Array.from({ length: Math.min(batch, total - start) }, (_, i) => one(start + i)));
    for (const answer of answers) {
      statuses.push(answer.status);
      if (answer.status === 429) limited ??= answer;
    }
  }
  return { statuses, limited };
}

/**
 * The first `burst` guesses are refused for what they are (the source's bucket starts full),
 * and most of the guesses past it are limited, with a retry hint. "Most": the bucket refills
 * as the guesses go, a token now and then on a slow machine; no timing is assumed beyond it.
 */
function expectLimited(result: { statuses: number[]; limited: Answer | undefined }, burst: number, refusedAs: number[], json = true): void {
  const seen = result.statuses.join(',');
  expect(
    result.statuses.slice(0, burst).every((s) => refusedAs.includes(s)),
    seen,
  ).toBe(true);
  const past = result.statuses.slice(burst);
  expect(
    past.every((s) => s === 429 || refusedAs.includes(s)),
    seen,
  ).toBe(true);
  expect(past.filter((s) => s === 429).length, seen).toBeGreaterThan(past.length / 2);
  expect(Number(result.limited?.headers['retry-after'])).toBeGreaterThan(0);
  if (json && result.limited) {
    expect(errorOf(result.limited)?.code).toBe('RATE_LIMITED');
    expect(errorOf(result.limited)?.details.retryAfterSeconds).toBeGreaterThan(0);
  }
}

/**
 * A right guess from a limited source is refused 429 as well. Tried right after a wrong guess
 * was limited; a token refilled in between lets it through, so it is tried a few times, and
 * one 429 proves the limit sits before authentication.
 */
async function rightGuessLimited(wrong: () => Promise<Answer>, right: () => Promise<Answer>): Promise<number[]> {
  const answers: number[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    while ((await wrong()).status !== 429);
    const status = (await right()).status;
    answers.push(status);
    if (status === 429) break;
  }
  return answers;
}

describe('guessed join tokens', () => {
  it('are limited per source after the burst; a good join from another source passes', async () => {
    const csr = newKeyAndCsr(workDir(), 'guess', 'ec');
    const wrong = (i: number) => api(source(1), 'POST', '/v1/join', { body: { token: `ifj_guess${i}.${'x'.repeat(22)}`, csr } });
    expectLimited(await guess(REFUSAL_LIMITS.burst * 2, 20, wrong), REFUSAL_LIMITS.burst, [401]);
    // The limited source is refused even with a real token: its answer says nothing about it.
    const token = (await site.t.root.call<{ token: string }>('POST', `/v1/sites/${site.siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600, maxUses: 10 }))
      .token;
    expect(
      await rightGuessLimited(
        () => wrong(0),
        () => api(source(1), 'POST', '/v1/join', { body: { token, csr } }),
      ),
    ).toContain(429);
    expect((await api(source(2), 'POST', '/v1/join', { body: { token, csr: newKeyAndCsr(workDir(), 'good', 'ec') } })).status).toBe(201);
  });
});

describe('guessed API credentials', () => {
  it('are limited per source after the burst; the real credential from another source passes', async () => {
    const bearer = site.t.cp.rootCredential.bearer;
    const [id] = bearer.split('.');
    const wrong = (i: number) => api(source(3), 'GET', '/v1/events?tenantId=root', { bearer: `${id}.wrong${i}${'x'.repeat(30)}` });
    expectLimited(await guess(REFUSAL_LIMITS.burst * 2, 20, wrong), REFUSAL_LIMITS.burst, [401]);
    expect(
      await rightGuessLimited(
        () => wrong(0),
        () => api(source(3), 'GET', '/v1/events?tenantId=root', { bearer }),
      ),
    ).toContain(429);
    expect((await api(source(4), 'GET', '/v1/events?tenantId=root', { bearer })).status).toBe(200);
    // Liveness answers the limited source.
    expect((await api(source(3), 'GET', '/healthz')).status).toBe(200);
  });

  it('are limited at the console sign-in too', async () => {
    const form = await send(source(5), site.t.cp.url, 'GET', '/console/sign-in');
    const cookie = String(form.headers['set-cookie']).split(';')[0] as string;
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] as string;
    expect(csrf).toBeTruthy();
    const [id] = site.t.cp.rootCredential.bearer.split('.');
    const result = await guess(REFUSAL_LIMITS.burst * 2, 20, (i) =>
      send(source(5), site.t.cp.url, 'POST', '/console/sign-in', {
        body: new URLSearchParams({ csrf, credential: `${id}.wrong${i}${'x'.repeat(30)}` }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      }),
    );
    // The console answers in HTML (its own error page), with the same status, code and hint.
    expectLimited(result, REFUSAL_LIMITS.burst, [401], false);
    expect(result.limited?.text).toMatch(/RATE_LIMITED/);
  });

  it('are not counted when no credential is sent at all (nothing is guessed)', async () => {
    const result = await guess(REFUSAL_LIMITS.burst * 2, 20, () => api(source(6), 'GET', '/v1/events?tenantId=root'));
    expect(new Set(result.statuses)).toEqual(new Set([401]));
  });
});

describe('guesses at the boot server', () => {
  const boot = (from: string, path: string) => send(from, agent.bootServer?.url as string, 'GET', path);
  const mac = (i: number) => `02:00:00:05:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;

  it('of MACs are limited per source after the burst; another source is still served', async () => {
    const result = await guess(BOOT_REFUSAL_LIMITS.burst * 2, 25, (i) => boot(source(7), `/boot/ipxe?mac=${mac(i)}`));
    expectLimited(result, BOOT_REFUSAL_LIMITS.burst, [404], false);
    expect(result.limited?.text).toMatch(/^RATE_LIMITED: too many refused requests/);
    // Limited on every path, the chain script included.
    expect(
      await rightGuessLimited(
        () => boot(source(7), `/boot/ipxe?mac=${mac(0)}`),
        () => boot(source(7), '/boot/chain.ipxe'),
      ),
    ).toContain(429);
    expect((await boot(source(8), '/boot/chain.ipxe')).status).toBe(200);
    expect((await boot(source(8), `/boot/ipxe?mac=${mac(9_999)}`)).status).toBe(404);
  });

  it('of cache grants are limited per source after the burst', async () => {
    const digest = 'ab'.repeat(32);
    const result = await guess(BOOT_REFUSAL_LIMITS.burst * 2, 25, (i) => boot(source(9), `/cache/t/${`g${i}`.padEnd(22, 'x')}/${digest}`));
    expectLimited(result, BOOT_REFUSAL_LIMITS.burst, [404], false);
    expect((await boot(source(10), '/boot/chain.ipxe')).status).toBe(200);
  });
});

describe('refused joins in the event log', () => {
  const refusedJoins = () => site.t.cp.db.event.findMany({ where: { type: 'security.join.refused' }, orderBy: { seq: 'asc' } });

  it('stay small whatever the query string carried: 12 KB is refused before routing, a long one within the limit is not recorded', async () => {
    const before = (await refusedJoins()).length;
    const huge = await send(source(11), site.t.cp.url, 'POST', `/v1/join?pad=${'q'.repeat(12 * 1024)}`, {
      body: '{"token":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(huge.status).toBe(400);
    expect(JSON.parse(huge.text)).toMatchObject({ error: { code: 'INVALID_INPUT', details: { path: 'url' } } });
    expect((await refusedJoins()).length).toBe(before);

    const long = await send(source(11), site.t.cp.url, 'POST', `/v1/join?pad=${'q'.repeat(1_900)}`, {
      body: '{"token":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(long.status).toBe(400);
    const events = (await refusedJoins()).slice(before);
    expect(events).toHaveLength(1);
    // The route's path, not the caller's URL.
    expect(events[0]?.data).toMatchObject({ purpose: '/v1/join', code: 'INVALID_INPUT' });
    expect(JSON.stringify(events[0])).not.toContain('qqqq');
    expect(JSON.stringify(events[0]).length).toBeLessThan(600);
  });
});
