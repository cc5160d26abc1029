// The smaller findings of the hostile probe (issue 13), each through the real API and
// database: repeated tenant creation, tenant names with control characters, the event
// cursor and type filter, a Redfish address that is not a URL, a deeply nested profile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../services/ids';
import { applyStateOutcome, type StateOutcome } from '../../services/metal/lifecycle-moves';
import { stateWorkflowId } from '../../services/temporal/workflow-ids';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
beforeAll(async () => {
  t = await startTestControlPlane();
});
afterAll(async () => t?.close());

type ErrorBody = { error: { code: string; message: string; details: { path?: string } } };
type EventsPage = { events: Array<{ seq: number; type: string; subjectId: string | null }>; nextCursor: number | null };

const tenantEvents = async (id: string) => (await t.root.call<EventsPage>('GET', `/v1/events?tenantId=${id}&type=tenant.created`)).events;

describe('creating a tenant', () => {
  it('answers a repeat of the same request 200 with the tenant and records no second event', async () => {
    const first = await t.root.request('POST', '/v1/tenants', { id: 'repeat', name: 'Repeat' });
    expect(first.status).toBe(201);
    const again = await t.root.request('POST', '/v1/tenants', { id: 'repeat', name: 'Repeat' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: 'repeat', name: 'Repeat' });
    expect(await tenantEvents('repeat')).toHaveLength(1);
  });

  it('refuses the same id with another name with CONFLICT and keeps the stored name', async () => {
    await t.root.call('POST', '/v1/tenants', { id: 'keeps-name', name: 'Original' });
    const other = await t.root.request<ErrorBody>('POST', '/v1/tenants', { id: 'keeps-name', name: 'Impostor' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('CONFLICT');
    expect(other.body.error.details.path).toBe('name');
    expect((await t.cp.db.tenant.findUnique({ where: { id: 'keeps-name' } }))?.name).toBe('Original');
    expect(await tenantEvents('keeps-name')).toHaveLength(1);
  });

  it('refuses the root tenant with CONFLICT: it exists from the start under its own name', async () => {
    const res = await t.root.request<ErrorBody>('POST', '/v1/tenants', { id: 'root', name: 'Mine now' });
    expect(res.body.error.code).toBe('CONFLICT');
    expect((await t.cp.db.tenant.findUnique({ where: { id: 'root' } }))?.name).not.toBe('Mine now');
  });

  it('records one event when the same create races itself', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => t.root.request('POST', '/v1/tenants', { id: 'racing', name: 'Racing' })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(await tenantEvents('racing')).toHaveLength(1);
  });

  it('refuses a name holding NUL, control or bidi characters with INVALID_INPUT at name', async () => {
    const names = ['a\u0000b', 'tab\there', 'new\nline', 'del\u007f', 'c1\u0085', 'evil\u202egnp.exe', 'iso\u2066late\u2069', 'mark\u200f', 'arabic\u061cmark'];
    for (const name of names) {
      const res = await t.root.request<ErrorBody>('POST', '/v1/tenants', { id: 'bad-name', name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.details.path).toBe('name');
    }
    expect(await t.cp.db.tenant.findUnique({ where: { id: 'bad-name' } })).toBeNull();
    // Letters of any script and ordinary punctuation stay welcome.
    expect((await t.root.request('POST', '/v1/tenants', { id: 'unicode-name', name: 'Société Générale — 東京 (β)' })).status).toBe(201);
  });
});

describe('the event log', () => {
  it('answers a null nextCursor on the last page and the last seq before it', async () => {
    await t.root.call('POST', '/v1/tenants', { id: 'cursor', name: 'Cursor' });
    for (let i = 0; i < 4; i++) await t.root.call('POST', '/v1/credentials', { tenantId: 'cursor', name: `c${i}`, permissions: ['compute:events:read'] });
    const all = (await t.root.call<EventsPage>('GET', '/v1/events?tenantId=cursor&limit=500')).events;
    expect(all).toHaveLength(5);
    const seen: number[] = [];
    let after = 0;
    for (let pages = 0; pages < all.length; pages++) {
      const page = await t.root.call<EventsPage>('GET', `/v1/events?tenantId=cursor&limit=2&after=${after}`);
      seen.push(...page.events.map((e) => e.seq));
      if (page.nextCursor === null) break;
      expect(page.nextCursor).toBe(page.events[page.events.length - 1]?.seq);
      after = page.nextCursor;
    }
    expect(seen).toEqual(all.map((e) => e.seq));
    // A page holding exactly the rest is the last one, and so is an empty page past the end.
    const last = all[all.length - 1]?.seq as number;
    expect((await t.root.call<EventsPage>('GET', `/v1/events?tenantId=cursor&limit=1&after=${last - 1}`)).nextCursor).toBeNull();
    const past = await t.root.call<EventsPage>('GET', `/v1/events?tenantId=cursor&after=${last}`);
    expect(past).toEqual({ events: [], nextCursor: null });
  });

  it('matches type as a prefix of the name, never as a LIKE pattern', async () => {
    await t.root.call('POST', '/v1/tenants', { id: 'typed', name: 'Typed' });
    expect((await t.root.call<EventsPage>('GET', '/v1/events?tenantId=typed&type=tenant.')).events.map((e) => e.type)).toEqual(['tenant.created']);
    expect((await t.root.call<EventsPage>('GET', '/v1/events?tenantId=typed&type=tenant.created')).events).toHaveLength(1);
    for (const pattern of ['%', '_', 'tenant%created', 't_nant', 'TENANT']) {
      const res = await t.root.request<ErrorBody>('GET', `/v1/events?tenantId=typed&type=${encodeURIComponent(pattern)}`);
      expect(res.status, pattern).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.details.path).toBe('type');
    }
  });
});

describe('enrolling a machine', () => {
  // No such pool: an address the schema takes gets as far as the pool lookup (NOT_FOUND).
  const enroll = (bmc: Record<string, string>) =>
    t.root.request<ErrorBody>('POST', '/v1/metal/nodes', { tenantId: 'root', poolId: newId('pool'), bmc: { username: 'admin', password: 'hunter2', ...bmc } });

  it('refuses a Redfish address that is not a URL with INVALID_INPUT at bmc.address', async () => {
    for (const address of ['not a url', '10.0.0.5', 'http//10.0.0.5', '://', 'https://', 'ftp://10.0.0.5', 'https://u:p@10.0.0.5']) {
      const res = await enroll({ driver: 'redfish', address });
      expect(res.status, address).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.details.path).toBe('bmc.address');
      expect(JSON.stringify(res.body)).not.toContain('hunter2');
    }
    expect(await t.cp.db.node.count()).toBe(0);
  });

  it('still takes a Redfish URL, a Redfish system URL and an IPMI host or host:port', async () => {
    for (const bmc of [
      { driver: 'redfish', address: 'https://10.0.0.5' },
      { driver: 'redfish', address: 'http://10.0.0.5:8000/redfish/v1/Systems/1' },
      { driver: 'ipmi', address: '10.0.0.5' },
      { driver: 'ipmi', address: 'bmc-7.rack-2:623' },
    ]) {
      const res = await enroll(bmc);
      expect(res.body.error.code, bmc.address).toBe('NOT_FOUND');
    }
  });
});

describe('storing a profile', () => {
  // Written as text: the client's own JSON.stringify is not what is under test. The deep value
  // sits in a host-config unit nobody registered, which takes free-form settings.
  const body = (depth: number, open: string, close: string, version = '') =>
    `{"tenantId":"root",${version}"document":{"id":"deep","version":1,"target":"metal","hostConfig":{"site-tuning":{"deep":${open.repeat(depth)}1${close.repeat(depth)}}},"steps":[{"use":"power.setPower","on":"site","with":{"action":"on"}}]}}`;
  const send = async (method: string, path: string, text: string) => {
    const response = await fetch(new URL(path, t.cp.url), {
      method,
      headers: { authorization: `Bearer ${t.cp.rootCredential.bearer}`, 'content-type': 'application/json' },
      body: text,
    });
    return { status: response.status, body: (await response.json()) as ErrorBody };
  };
  const create = (depth: number, open: string, close: string) => send('POST', '/v1/profiles', body(depth, open, close));
  const replace = (depth: number, open: string, close: string) => send('PATCH', '/v1/profiles/deep', body(depth, open, close, '"version":1,'));

  it('refuses a 5,000-deep document with INVALID_INPUT, and stays up', async () => {
    for (const [open, close] of [
      ['{"a":', '}'],
      ['[', ']'],
    ] as const) {
      for (const res of [await create(5000, open, close), await replace(5000, open, close)]) {
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('INVALID_INPUT');
      }
    }
    expect(await t.cp.db.profile.count({ where: { profileId: 'deep' } })).toBe(0);
    expect((await t.anonymous.request('GET', '/healthz')).status).toBe(200);
  });

  it('refuses a document nested past its own bound at the path where the depth ran out', async () => {
    for (const [open, close] of [
      ['{"a":', '}'],
      ['[', ']'],
    ] as const) {
      for (const res of [await create(40, open, close), await replace(40, open, close)]) {
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('INVALID_INPUT');
        expect(res.body.error.details.path).toMatch(/^document\.hostConfig\.site-tuning\.deep[.[]/);
        expect(res.body.error.message).toMatch(/nested deeper than/);
      }
    }
    expect(await t.cp.db.profile.count({ where: { profileId: 'deep' } })).toBe(0);
    expect((await create(20, '{"a":', '}')).status).toBe(201);
  });
});

describe('a release outcome', () => {
  // A node resting in `releasing` with its state workflow, as metal.undeploy leaves it.
  const releasingNode = async () => {
    const nodeId = newId('node');
    const workflowId = stateWorkflowId(nodeId, 'releasing', 1);
    await t.cp.db.node.create({
      data: {
        id: nodeId,
        tenantId: 'root',
        siteId: newId('site'),
        role: 'host',
        provisionState: 'releasing',
        releaseWipe: 'quick',
        workflowId,
        workflowSeq: 1,
        power: 'on',
      },
    });
    return { nodeId, workflowId };
  };

  it('with no verified wipe (none at all, or an unsigned `attested: true`) fails with UNVERIFIED_WIPE instead of reaching ready', async () => {
    const cases: Array<StateOutcome['outputs']> = [
      undefined,
      {},
      { 'steps[0]': { powered: 'off' } },
      { 'cleanup[0]': { cleaned: true } },
      { 'steps[2]': { mode: 'quick', attested: true } },
    ];
    for (const outputs of cases) {
      const node = await releasingNode();
      expect(await applyStateOutcome(t.cp.db, { ...node, outcome: 'succeeded', ...(outputs ? { outputs } : {}) }), JSON.stringify(outputs)).toEqual({
        applied: true,
        state: 'failed',
      });
      const row = await t.cp.db.node.findUniqueOrThrow({ where: { id: node.nodeId } });
      expect(row).toMatchObject({ failedFrom: 'releasing', lastError: { code: 'UNVERIFIED_WIPE' } });
    }
  });

  it('with a verified wipe reaches ready (the same path, for contrast; test/integration/attestations.test.ts verifies real signatures)', async () => {
    const node = await releasingNode();
    // verifiedWipes is what activities/attested-outcome.ts sets once the wipe's attestation verified.
    expect(await applyStateOutcome(t.cp.db, { ...node, outcome: 'succeeded', outputs: {}, verifiedWipes: 1 })).toEqual({ applied: true, state: 'ready' });
  });
});
