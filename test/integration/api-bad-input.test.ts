// Bad input on every POST/PATCH/PUT/DELETE route the server serves (its OpenAPI document and
// the routes it hides from it), through the real API on its socket: a wrong type for each body
// field, 1 MB strings, JSON 10,000 levels deep, an unknown field, a __proto__ key, NUL, `../`,
// bad percent-encodings and 300-character segments in path ids, a 10 MB body, text and form
// bodies, empty bodies. Each answer is a 4xx `{ error: { code, message, details } }` with one
// of the spec's codes (the field's path named when a field is wrong), never a 500 and never a
// stack trace; the console's form routes answer their HTML pages the same way. Hostile text in
// every string field (against ids of no object and against real ones, so handlers run through)
// and hostile path ids and query values on every read route answer below 500, NUL and lone
// surrogates refused by name; a request Node's HTTP parser refuses gets the API's shape too;
// and the process still answers /healthz after the run. Credentialed routes are called with
// the root credential, so what is tested is input handling, not authentication; probes come
// from several loopback addresses, so the per-source refusal limit of agents' and join's
// routes never answers for the input. Passes on SQLite and on PostgreSQL
// (scripts/test-postgres.sh), whose text refuses NUL.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCodes, httpStatusOf, type ErrorCode } from '../../core/errors';
import { newId } from '../../services/ids';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import {
  probeApprover,
  routesToCover,
  routeSpecs,
  urlOf,
  type JsonSchema,
  type OpenApiRoute,
  type RouteRequest,
  type TenantObjects,
} from '../helpers/openapi-routes';

const MUTATING = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
const MB = 1_000_000;

let t: TestControlPlane;
let routes: OpenApiRoute[];
/** Root's own objects of each kind, for the probes a handler must get through to. */
let real: TenantObjects;

/** Ids of the right shape for objects that need not exist: every probe is refused before any lookup. */
const objects: TenantObjects = {
  tenantId: 'root',
  siteId: newId('site'),
  siteTokenId: newId('joinToken'),
  poolId: newId('pool'),
  nodeId: newId('node'),
  workflowId: 'node:probe:deploying:1',
  imageId: newId('image'),
  profileId: 'probe-profile',
  credentialId: newId('credential'),
  joinRequestId: newId('joinRequest'),
  checkId: newId('check'),
  discoveredSiteId: newId('site'),
  bulkId: newId('bulkRun'),
  batchId: newId('quorumBatch'),
};

interface Answer {
  status: number;
  text: string;
}

/** One request on the real socket from a chosen loopback address; a server that answers before reading the whole body is an answer too. */
function send(from: string, method: string, pathAndQuery: string, body: string | undefined, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(t.cp.url);
  return new Promise((resolve, reject) => {
    // A length for every body: Node sends a DELETE's body unframed otherwise. One connection per request: no answer waits on another's body.
    const framing = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: pathAndQuery, method, localAddress: from, headers: { ...framing, ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // Writing a body the server refused by its length may end in EPIPE/ECONNRESET after the answer came.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.end(body);
  });
}

interface Probe {
  what: string;
  /** Path and query, as sent (path ids may be deliberately raw). */
  url: string;
  body?: string;
  contentType?: string;
  /** The field the answer must name (details.path or the message), or `body` for a refusal of the whole body. */
  field?: string;
  /** Other paths an answer may name instead (a body over the route's limit is refused whole). */
  orField?: string;
  /** The statuses that are right (400 unless said). */
  statuses?: number[];
}

/** A value of another JSON type than the schema's. */
function wrongTypeFor(schema: JsonSchema): unknown {
  switch (schema.type) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return 'not a number';
    case 'boolean':
      return 'yes';
    case 'array':
      return 'not an array';
    case 'object':
      return 'not an object';
    default:
      return undefined; // a union or reference: no single wrong type
  }
}

/** Every field of the body schema (and of its nested objects that the valid body holds), as paths. */
function fieldsOf(schema: JsonSchema | undefined, present: unknown, prefix: string[] = []): Array<{ path: string[]; schema: JsonSchema }> {
  const out: Array<{ path: string[]; schema: JsonSchema }> = [];
  for (const [name, field] of Object.entries(schema?.properties ?? {})) {
    out.push({ path: [...prefix, name], schema: field });
    const nested = (present as Record<string, unknown> | undefined)?.[name];
    if (field.type === 'object' && field.properties && nested && typeof nested === 'object' && !Array.isArray(nested))
      out.push(...fieldsOf(field, nested, [...prefix, name]));
  }
  return out;
}

function withField(body: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) return { ...body, [head]: value };
  return { ...body, [head]: withField((body[head] as Record<string, unknown>) ?? {}, rest, value) };
}

/** The probes of one route, from its schema in the document and a valid request from the table. */
function probesOf(route: OpenApiRoute, valid: RouteRequest): Probe[] {
  const url = urlOf(route, valid);
  const base = valid.body ?? {};
  const json = (what: string, body: unknown, field?: string, orField?: string): Probe => ({
    what,
    url,
    body: JSON.stringify(body),
    contentType: 'application/json',
    ...(field ? { field } : {}),
    ...(orField ? { orField } : {}),
  });
  const probes: Probe[] = [];
  for (const { path, schema } of fieldsOf(route.body, base)) {
    const name = path.join('.');
    const wrong = wrongTypeFor(schema);
    if (wrong !== undefined) probes.push(json(`${name}: ${JSON.stringify(wrong)} for a ${schema.type}`, withField(base, path, wrong), name));
    if (schema.type === 'string') probes.push(json(`${name}: a 1 MB string`, withField(base, path, 'x'.repeat(MB)), name, 'body'));
  }
  // Whatever the route takes, a hostile body is refused before it is read.
  probes.push(
    { what: 'JSON 10,000 levels deep', url, body: `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`, contentType: 'application/json', field: 'body' },
    {
      what: 'an array 10,000 levels deep in a field',
      url,
      body: `{"tenantId":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
      contentType: 'application/json',
      field: 'body',
    },
    { what: 'a 10 MB body', url, body: JSON.stringify({ ...base, pad: 'x'.repeat(10 * MB) }), contentType: 'application/json', field: 'body' },
  );
  if (route.body) {
    probes.push(
      json('an unknown field', { ...base, unexpectedField: 1 }, 'unexpectedField'),
      { what: 'text/plain', url, body: JSON.stringify(base), contentType: 'text/plain', field: 'body' },
      { what: 'a form body', url, body: new URLSearchParams({ tenantId: 'root' }).toString(), contentType: 'application/x-www-form-urlencoded', field: 'body' },
      { what: 'an empty JSON body', url, body: '', contentType: 'application/json', field: 'body' },
      { what: 'no body at all', url, field: 'body' },
      { what: 'JSON that does not parse', url, body: '{"tenantId": "root",', contentType: 'application/json', field: 'body' },
      {
        what: 'a __proto__ key',
        url,
        body: `{"__proto__":{"polluted":true},${JSON.stringify(base).slice(1)}`,
        contentType: 'application/json',
        field: 'body',
        orField: '__proto__',
      },
    );
  }
  // A route that takes its tenant from the query (the deletes) names it when it is missing, even if a body carries it.
  if (valid.query?.tenantId) {
    const withoutQuery = urlOf(route, { ...valid, query: {} }).replace(/\?$/, '');
    probes.push({
      what: 'tenantId in the body instead of the query',
      url: withoutQuery,
      body: JSON.stringify({ tenantId: valid.query.tenantId }),
      contentType: 'application/json',
      field: 'tenantId',
    });
  }
  for (const param of route.pathParams) {
    // An id the route's pattern refuses names the parameter; a malformed or overlong segment, the URL; `../` that leaves the route, no route at all.
    for (const raw of ['%00', 'a%00b', '..', '..%2F..%2Fetc%2Fpasswd', '%2e%2e%2f%2e%2e%2f', '%zz', '%E0%A4%A', 'x'.repeat(300)]) {
      probes.push({
        what: `path ${param} = ${raw.slice(0, 40)}`,
        url: urlOf(route, valid, { [param]: raw }),
        body: JSON.stringify(base),
        contentType: 'application/json',
        field: param,
        orField: 'url',
      });
    }
    probes.push({
      what: `path ${param} = ../../../etc/passwd`,
      url: urlOf(route, valid, { [param]: '../../../etc/passwd' }),
      body: JSON.stringify(base),
      contentType: 'application/json',
      statuses: [400, 404],
    });
  }
  return probes;
}

const STACK_TRACE = /\n\s+at |\bat [\w.<>]+ \(|node_modules|\.ts:\d+|\/work\//;

/** What is wrong with an API answer to a probe ([] when it is a proper refusal). */
function problemsOfApiAnswer(probe: Probe, answer: Answer): string[] {
  const problems: string[] = [];
  if (STACK_TRACE.test(answer.text)) problems.push('a stack trace or source path in the body');
  if (!(probe.statuses ?? [400]).includes(answer.status)) problems.push(`status ${answer.status}, not ${(probe.statuses ?? [400]).join(' or ')}`);
  let error: { code?: string; message?: string; details?: { path?: unknown } } | undefined;
  try {
    error = (JSON.parse(answer.text) as { error?: typeof error }).error;
  } catch {
    problems.push('not JSON');
  }
  if (!error || typeof error.message !== 'string' || typeof error.details !== 'object' || error.details === null)
    return [...problems, 'no { error: { code, message, details } }'];
  if (!(errorCodes as readonly string[]).includes(error.code ?? '')) problems.push(`code ${error.code} is not one of the spec's`);
  else if (httpStatusOf[error.code as ErrorCode] !== answer.status) problems.push(`code ${error.code} with status ${answer.status}`);
  if (probe.field) {
    const path = typeof error.details.path === 'string' ? error.details.path : '';
    const named = [probe.field, probe.orField].some(
      (f) => f !== undefined && (path === f || path.startsWith(`${f}.`) || path.startsWith(`${f}[`) || error.message?.includes(f)),
    );
    if (!named) problems.push(`does not name ${probe.field}${probe.orField ? ` or ${probe.orField}` : ''} (path ${JSON.stringify(error.details.path)})`);
  }
  return problems;
}

/** The console's form routes answer a browser: an HTML page or a redirect, never a 500 or a trace. */
function problemsOfConsoleAnswer(answer: Answer): string[] {
  const problems: string[] = [];
  if (STACK_TRACE.test(answer.text)) problems.push('a stack trace or source path in the body');
  if (answer.status < 300 || answer.status >= 500) problems.push(`status ${answer.status}`);
  return problems;
}

const mutating = () => routes.filter((r) => MUTATING.has(r.method));

beforeAll(async () => {
  t = await startTestControlPlane();
  routes = await routesToCover(t.cp.url, t.cp.api);
  real = await makeRootObjects();
});

async function makeRootObjects(): Promise<TenantObjects> {
  const r = t.root;
  const site = await r.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'bad-input-1', idempotencyKey: 'bad-input-site' });
  const token = await r.call<{ id: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 3600, maxUses: 16 });
  const pool = await r.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId: site.id, class: 'bad-input' });
  const node = await r.call<{ nodeId: string; workflowId: string | null }>('POST', '/v1/metal/nodes', {
    tenantId: 'root',
    poolId: pool.id,
    bmc: { driver: 'redfish', address: 'https://10.0.78.1', username: 'admin', password: 'bad-input-bmc' },
  });
  const image = await r.call<{ id: string }>('POST', '/v1/images', {
    tenantId: 'root',
    ref: 'bad-input@1',
    kind: 'os',
    format: 'raw',
    compression: 'none',
    sha256: 'ef'.repeat(32),
    sizeBytes: 1,
    source: 'https://images.example/b.raw',
  });
  const profile = await r.call<{ id: string }>('POST', '/v1/profiles', {
    tenantId: 'root',
    document: { id: 'bad-input-profile', version: 1, target: 'metal', steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' } }] },
  });
  const credential = await r.call<{ id: string }>('POST', '/v1/credentials', { tenantId: 'root', name: 'bad-input', permissions: ['compute:events:read'] });
  const check = await r.call<{ id: string }>('POST', '/v1/system/checks', { tenantId: 'root' });
  const joinRequestId = newId('joinRequest');
  await t.cp.db.joinRequest.create({
    data: { id: joinRequestId, tenantId: 'root', siteId: site.id, status: 'open', expiresAt: new Date(Date.now() + 3_600_000) },
  });
  const bulk = await r.call<{ bulkId: string }>('POST', '/v1/metal/bulk', {
    tenantId: 'root',
    poolId: pool.id,
    verb: 'provide',
    nodeIds: [node.nodeId],
    reason: 'bad input',
  });
  // A quorum policy and a batch under it (a second bulk run asks for one).
  await r.call('PUT', '/v1/quorum/policy', { tenantId: 'root', required: 1, approvers: [probeApprover] });
  const underQuorum = await r.call<{ bulkId: string }>('POST', '/v1/metal/bulk', {
    tenantId: 'root',
    poolId: pool.id,
    verb: 'provide',
    nodeIds: [node.nodeId],
    reason: 'bad input quorum',
  });
  const batch = await t.cp.db.quorumBatch.findFirstOrThrow({ where: { subject: underQuorum.bulkId } });
  return {
    tenantId: 'root',
    siteId: site.id,
    siteTokenId: token.id,
    poolId: pool.id,
    nodeId: node.nodeId,
    workflowId: node.workflowId ?? `node:${node.nodeId}:enrolling:1`,
    imageId: image.id,
    profileId: profile.id,
    credentialId: credential.id,
    joinRequestId,
    checkId: check.id,
    discoveredSiteId: site.id,
    bulkId: bulk.bulkId,
    batchId: batch.id,
  };
}
afterAll(async () => t?.close());

describe('bad input on every mutating route', () => {
  it('serves an OpenAPI document whose every $ref resolves', async () => {
    const text = await (await fetch(new URL('/docs/json', t.cp.url))).text();
    const document = JSON.parse(text) as { components?: { schemas?: Record<string, unknown> } };
    const refs = [...new Set([...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] as string))];
    expect(refs.filter((name) => !document.components?.schemas?.[name])).toEqual([]);
  });

  it('has a valid request for each one in the route table', () => {
    expect(mutating().length).toBeGreaterThan(40);
    const without = mutating().filter((r) => !routeSpecs[r.key]?.request);
    expect(
      without.map((r) => r.key),
      'add a request to test/helpers/openapi-routes.ts routeSpecs',
    ).toEqual([]);
  });

  it('answers each probe with a 4xx naming the code and the field, never a 500 or a stack trace', async () => {
    const failures: string[] = [];
    const probeRoute = async (route: OpenApiRoute, index: number) => {
      const spec = routeSpecs[route.key];
      if (!spec?.request) return;
      const valid = spec.access === 'tenant' ? spec.request(objects, 'root') : spec.request(objects);
      // The console's own pages answer a browser; its codec (a credentialed route under /console) answers as the API does.
      const isConsole = spec.access === 'public' && route.path.startsWith('/console');
      const credential: Record<string, string> = spec.access === 'public' ? {} : { authorization: `Bearer ${t.cp.rootCredential.bearer}` };
      for (const [probeIndex, probe] of probesOf(route, valid).entries()) {
        // A source of its own for every 40 probes: the refusal limit of agents' and join's routes allows 50 at once.
        const from = `127.13.${index + 1}.${Math.floor(probeIndex / 40) + 1}`;
        const answer = await send(from, route.method, probe.url, probe.body, {
          ...credential,
          ...(probe.contentType ? { 'content-type': probe.contentType } : {}),
        });
        const problems = isConsole ? problemsOfConsoleAnswer(answer) : problemsOfApiAnswer(probe, answer);
        if (problems.length > 0) failures.push(`${route.key} — ${probe.what}: ${problems.join('; ')}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    };
    // Four routes at a time (each from its own addresses): the 10 MB bodies are most of the run.
    const list = mutating();
    for (let i = 0; i < list.length; i += 4) await Promise.all(list.slice(i, i + 4).map((route, j) => probeRoute(route, i + j)));
    expect(failures).toEqual([]);
  });

  it.each([
    ['ids of no object (refused at the lookup)', () => objects],
    ["root's real objects (the handlers run through)", () => real],
  ])(
    'answers hostile text and numbers in each field below 500 (a 4xx in the API shape, or served; NUL or a lone surrogate always refused naming the field), never with a stack trace: %s',
    async (_what, objectsOf) => {
      const ids = objectsOf();
      // Values a schema may let through (free text, ids looked up later, numbers past a column's width) that storage or a lookup can choke on.
      const hostileText = ['a\u0000b', '../../../etc/passwd', '\ud800', '\u202eevil', '\'; DROP TABLE "Tenant"; --', '%00%2e%2e', 'x'.repeat(10_000)];
      const hostileNumbers = [2_147_483_648, Number.MAX_SAFE_INTEGER, -1, 0, 1.5, 1e308];
      const failures: string[] = [];
      for (const [index, route] of mutating().entries()) {
        const spec = routeSpecs[route.key];
        if (!spec?.request || (spec.access === 'public' && route.path.startsWith('/console'))) continue;
        const valid = spec.access === 'tenant' ? spec.request(ids, 'root') : spec.request(ids);
        const credential: Record<string, string> = spec.access === 'public' ? {} : { authorization: `Bearer ${t.cp.rootCredential.bearer}` };
        for (const [fieldIndex, { path, schema }] of fieldsOf(route.body, valid.body ?? {}).entries()) {
          const hostile: unknown[] = schema.type === 'string' ? hostileText : schema.type === 'integer' || schema.type === 'number' ? hostileNumbers : [];
          for (const value of hostile) {
            // NUL and a lone surrogate are never text: refused naming the field, whatever the field.
            const refused = value === '\ud800' || value === 'a\u0000b';
            const probe: Probe = {
              what: `${path.join('.')} = ${JSON.stringify(value).slice(0, 30)}`,
              url: urlOf(route, valid),
              ...(refused ? { field: path.join('.') } : {}),
            };
            const answer = await send(
              `127.14.${index + 1}.${fieldIndex + 1}`,
              route.method,
              probe.url,
              JSON.stringify(withField(valid.body ?? {}, path, value)),
              { ...credential, 'content-type': 'application/json' },
            );
            const problems =
              answer.status < 400 && !refused
                ? STACK_TRACE.test(answer.text)
                  ? ['a stack trace']
                  : []
                : problemsOfApiAnswer({ ...probe, statuses: refused ? [400] : [answer.status] }, answer);
            if (answer.status >= 500) problems.push(`status ${answer.status}`);
            if (problems.length > 0) failures.push(`${route.key} — ${probe.what}: ${problems.join('; ')}: ${answer.status} ${answer.text.slice(0, 200)}`);
          }
        }
      }
      expect(failures).toEqual([]);
    },
  );

  it('answers hostile path ids and query values on every read route below 500 in the API shape (NUL refused naming the parameter)', async () => {
    const hostile = ['%00', 'a%00b', '%ED%A0%80', '..%2F..%2Fetc', '%zz', 'x'.repeat(300), '%27%3B--', '2147483648', '-1', '1e308'];
    const failures: string[] = [];
    for (const [index, route] of routes.filter((r) => r.method === 'GET').entries()) {
      const spec = routeSpecs[route.key];
      if (!spec || spec.access === 'public') continue;
      const valid = spec.access === 'tenant' ? spec.request(objects, 'root') : spec.request(objects);
      // NUL is never text: refused naming the parameter, on a path or in a query.
      const variants: Array<{ what: string; url: string; field?: string }> = [];
      const named = (name: string, raw: string) => (raw.includes('%00') ? { field: name } : {});
      for (const param of route.pathParams)
        for (const raw of hostile)
          variants.push({ what: `path ${param} = ${raw.slice(0, 30)}`, url: urlOf(route, valid, { [param]: raw }), ...named(param, raw) });
      for (const name of Object.keys(valid.query ?? {})) {
        for (const raw of hostile) {
          const url = urlOf(route, { ...valid, query: {} }).replace(/\?$/, '');
          const others = Object.entries(valid.query ?? {}).filter(([key]) => key !== name);
          variants.push({
            what: `query ${name} = ${raw.slice(0, 30)}`,
            url: `${url}?${[...others.map(([k, v]) => `${k}=${encodeURIComponent(v)}`), `${name}=${raw}`].join('&')}`,
            ...named(name, raw),
          });
        }
      }
      for (const variant of variants) {
        const answer = await send(`127.15.${index + 1}.1`, 'GET', variant.url, undefined, { authorization: `Bearer ${t.cp.rootCredential.bearer}` });
        const problems =
          answer.status < 400 && !variant.field
            ? STACK_TRACE.test(answer.text)
              ? ['a stack trace']
              : []
            : problemsOfApiAnswer({ ...variant, statuses: variant.field ? [400] : [answer.status] }, answer);
        if (answer.status >= 500) problems.push(`status ${answer.status}`);
        if (problems.length > 0) failures.push(`${route.key} — ${variant.what}: ${problems.join('; ')}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers a root operator naming a tenant that does not exist NOT_FOUND on every mutating route, and stores nothing for it', async () => {
    const failures: string[] = [];
    for (const route of mutating()) {
      const spec = routeSpecs[route.key];
      if (spec?.access !== 'tenant') continue;
      const request = spec.request(real, 'no-such-tenant');
      const res = await t.root.request<{ error?: { code: string } }>(route.method, urlOf(route, request), request.body);
      if (res.status !== 404 || res.body.error?.code !== 'NOT_FOUND') failures.push(`${route.key}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    const stored = await Promise.all([
      t.cp.db.event.count({ where: { tenantId: 'no-such-tenant' } }),
      t.cp.db.systemCheck.count({ where: { tenantId: 'no-such-tenant' } }),
      t.cp.db.profile.count({ where: { tenantId: 'no-such-tenant' } }),
      t.cp.db.image.count({ where: { tenantId: 'no-such-tenant' } }),
    ]);
    expect(stored).toEqual([0, 0, 0, 0]);
  });

  it('refuses an IPMI address whose port is outside 1 to 65535 at bmc.address (it was enrolled)', async () => {
    for (const address of ['10.0.0.5:0', '10.0.0.5:65536', '10.0.0.5:99999']) {
      const res = await t.root.request<{ error: { code: string; details: { path?: string } } }>('POST', '/v1/metal/nodes', {
        tenantId: 'root',
        poolId: real.poolId,
        bmc: { driver: 'ipmi', address, username: 'admin', password: 'bad-input-ipmi' },
      });
      expect(res.status, address).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'bmc.address' } });
    }
    expect(await t.cp.db.node.count({ where: { bmcAddress: { startsWith: '10.0.0.5:' } } })).toBe(0);
  });

  it("answers a request Node's HTTP parser refuses in the API's shape too", async () => {
    const url = new URL(t.cp.url);
    const raw = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: url.hostname, port: Number(url.port) }, () => socket.end(bytes));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
        socket.on('error', reject);
      });
    for (const [what, bytes] of [
      ['not HTTP at all', 'NOT HTTP AT ALL\r\n\r\n'],
      ['a body with no length after a DELETE', `DELETE /v1/sites/${objects.siteId} HTTP/1.1\r\nHost: x\r\n\r\n{"tenantId":"root"}`],
      ['20 KB of headers', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(20_000)}\r\n\r\n`],
    ] as const) {
      const answer = await raw(bytes);
      const last = answer.lastIndexOf('HTTP/1.1 ');
      const [head = '', body = ''] = answer.slice(last).split('\r\n\r\n');
      expect(head, what).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(body), what).toMatchObject({ error: { code: 'INVALID_INPUT', details: { path: 'request' } } });
    }
  });

  it('still answers /healthz after the run', async () => {
    const res = await fetch(new URL('/healthz', t.cp.url));
    expect(res.status).toBe(200);
  });
});
