// Credentials, permissions, input errors, the event cursor and log redaction, through
// the real API and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
beforeAll(async () => {
  t = await startTestControlPlane();
});
afterAll(async () => t?.close());

type ErrorBody = { error: { code: string; message: string; details: { path?: string } } };

describe('authentication', () => {
  it('refuses a missing, malformed or unknown credential with UNAUTHENTICATED', async () => {
    for (const client of [t.anonymous, t.anonymous.withCredential('garbage'), t.anonymous.withCredential('ifk_cred_x.nope')]) {
      const res = await client.request<ErrorBody>('GET', '/v1/events?tenantId=root');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('stores only the hash of the root credential', async () => {
    const rows = await t.cp.db.apiCredential.findMany();
    const secret = t.cp.rootCredential.bearer.split('.')[1] as string;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(JSON.stringify(row)).not.toContain(secret);
  });
});

describe('tenants and credentials', () => {
  it('gives a tenant a credential limited to its permissions and its own tenant', async () => {
    await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
    const created = await t.root.call<{ credential: string; permissions: string[] }>('POST', '/v1/credentials', {
      tenantId: 'acme',
      name: 'reader',
      permissions: ['compute:events:read'],
    });
    expect(created.credential).toMatch(/^ifk_cred_/);
    const acme = t.anonymous.withCredential(created.credential);
    expect((await acme.request('GET', '/v1/events?tenantId=acme')).status).toBe(200);
    const other = await acme.request<ErrorBody>('GET', '/v1/events?tenantId=root');
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('PERMISSION_DENIED');
    const manage = await acme.request<ErrorBody>('POST', '/v1/tenants', { id: 'evil', name: 'Evil' });
    expect(manage.body.error.code).toBe('PERMISSION_DENIED');
    // The bearer is in the answer only: the event records the credential without it.
    const events = await t.root.call<{ events: Array<{ type: string; data: unknown }> }>('GET', '/v1/events?tenantId=acme');
    expect(events.events.some((e) => e.type === 'security.credential.created')).toBe(true);
    expect(JSON.stringify(events)).not.toContain(created.credential.split('.')[1]);
  });

  it('answers bad input with INVALID_INPUT and the offending path, and loses nothing', async () => {
    const res = await t.root.request<ErrorBody>('POST', '/v1/credentials', { tenantId: 'acme', name: 'x', permissions: ['compute:everything'] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    expect(res.body.error.details.path).toBe('permissions[0]');
    const unknownField = await t.root.request<ErrorBody>('POST', '/v1/tenants', { id: 'beta', name: 'Beta', colour: 'red' });
    expect(unknownField.status).toBe(400);
    expect(await t.cp.db.tenant.findUnique({ where: { id: 'beta' } })).toBeNull();
  });

  it('answers an unknown route with NOT_FOUND in the error shape', async () => {
    const res = await t.root.request<ErrorBody>('GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('the event log', () => {
  it('pages by cursor without gaps or repeats', async () => {
    for (let i = 0; i < 5; i++) await t.root.call('POST', '/v1/tenants', { id: `page-${i}`, name: `P${i}` });
    const seen: number[] = [];
    let after = 0;
    for (;;) {
      const page = await t.root.call<{ events: Array<{ seq: number }>; nextCursor: number | null }>('GET', `/v1/events?tenantId=root&limit=2&after=${after}`);
      seen.push(...page.events.map((e) => e.seq));
      if (page.nextCursor === null) break;
      after = page.nextCursor;
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe('OpenAPI', () => {
  it('is generated from the zod schemas', async () => {
    const doc = await t.anonymous.request<{ paths: Record<string, { post?: { requestBody?: unknown } }> }>('GET', '/docs/json');
    expect(doc.status).toBe(200);
    expect(doc.body.paths['/v1/credentials']?.post?.requestBody).toBeDefined();
    expect(JSON.stringify(doc.body.paths['/v1/credentials'])).toContain('compute:sites:manage');
  });

  it('documents the error answers of every route, and an answer the API gives matches them', async () => {
    type Operation = {
      responses: Record<
        string,
        { content?: { 'application/json'?: { schema?: { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } } } } }
      >;
    };
    const doc = await t.anonymous.request<{ paths: Record<string, Record<string, Operation>> }>('GET', '/docs/json');
    const operations = Object.entries(doc.body.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(operations.length).toBeGreaterThan(20);
    const codesOf = (op: Operation, status: number) =>
      op.responses[String(status)]?.content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum ?? [];
    const missing = operations
      .filter(({ op }) => !codesOf(op, 400).includes('INVALID_INPUT') || !codesOf(op, 404).includes('NOT_FOUND') || !codesOf(op, 409).includes('INVALID_STATE'))
      .map((o) => o.route);
    expect(missing).toEqual([]);
    // A route's own answers stay: a credential's creation still documents its 201.
    expect(Object.keys(doc.body.paths['/v1/credentials']?.post?.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '401', '403', '429', '500']));
    const refused = await t.anonymous.request<{ error: { code: string } }>('GET', '/v1/sites?tenantId=root');
    expect([refused.status, refused.body.error.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect(codesOf(doc.body.paths['/v1/sites']?.get as Operation, 401)).toEqual(['UNAUTHENTICATED']);
  });
});
