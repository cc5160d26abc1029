// Tenant isolation on every route the API serves (its OpenAPI document and the routes it hides
// from it), through the real API, database and Temporal: tenant acme owns one object of every
// kind; for each route another tenant's full credential gets NOT_FOUND for acme's objects,
// answered exactly as for ids nobody holds (no existence oracle), its own lists hold none of
// them, and naming acme is PERMISSION_DENIED; an acme credential lacking the route's
// permission gets PERMISSION_DENIED naming it (an operator's, on the platform's own routes);
// no credential gets UNAUTHENTICATED; and not one row of any table changed (refusal events
// aside). The public routes that act (agents', join, the console's forms) open for no API
// credential. A route test/helpers/openapi-routes.ts does not classify fails the first test
// by name. Passes on SQLite and on PostgreSQL (scripts/test-postgres.sh).
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../cli/api-client';
import { Prisma } from '../../services/db';
import { errorCodes } from '../../core/errors';
import { newId } from '../../services/ids';
import { permissions, type Permission } from '../../core/permissions';
import { signAgentRequest } from '../../services/pki/agent-request';
import type { MetalNodeView } from '../../core/schemas/metal';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import {
  probeApprover,
  routesToCover,
  routeSpecs,
  unclassified,
  urlOf,
  type OpenApiRoute,
  type RouteRequest,
  type RouteSpec,
  type TenantObjects,
} from '../helpers/openapi-routes';
import { newKeyAndCsr, workDir } from '../helpers/openssl';
import { until } from '../helpers/provision';

const OWNER = 'acme';
const OTHER = 'umbrella';

type ErrorBody = { error?: { code: string; message: string; details: Record<string, unknown> } };

let t: TestControlPlane;
let routes: OpenApiRoute[];
let owned: TenantObjects;
/** Ids of the same kinds that no tenant holds. */
const nobodys: TenantObjects = {
  tenantId: OTHER,
  siteId: newId('site'),
  siteTokenId: newId('joinToken'),
  poolId: newId('pool'),
  nodeId: newId('node'),
  workflowId: `node:${newId('node')}:enrolling:1`,
  imageId: newId('image'),
  profileId: 'nobodys-layout',
  credentialId: newId('credential'),
  joinRequestId: newId('joinRequest'),
  checkId: newId('check'),
  discoveredSiteId: newId('site'),
  bulkId: newId('bulkRun'),
  batchId: newId('quorumBatch'),
};
/** acme's credential holding every permission (it made acme's objects). */
let ownerAll: ApiClient;
/** For each permission, an acme credential holding every other one. */
const ownerLacking = new Map<Permission, ApiClient>();
/** For each permission, a root (operator) credential holding every other one: the platform's own routes. */
const rootLacking = new Map<Permission, ApiClient>();
/** umbrella's credential holding every permission. */
let otherAll: ApiClient;

const mint = async (tenantId: string, name: string, granted: string[]) =>
  t.root.call<{ id: string; credential: string }>('POST', '/v1/credentials', { tenantId, name, permissions: granted });

/** A site agent of `siteId` joins and reports one PXE client, so the site's discovered list is not empty. */
async function reportDiscovered(client: ApiClient, siteId: string): Promise<void> {
  const minted = await client.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: OWNER, ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, 'agent', 'ec');
  const joined = await t.anonymous.call<{ certificateChain: string[] }>('POST', '/v1/join', { token: minted.token, csr });
  const key = createPrivateKey({ key: readFileSync(path.join(dir, 'agent.key')) });
  const now = new Date().toISOString();
  const body = JSON.stringify({
    agentVersion: 'isolation',
    hostname: 'acme-site-agent',
    images: [],
    siteStatus: { state: 'READY', message: 'ok' },
    discovered: [{ mac: '52:54:00:77:00:01', productUuid: null, arch: 'x86_64', firstSeen: now, lastSeen: now, count: 1, relay: null }],
  });
  const headers = signAgentRequest(key, joined.certificateChain[0] as string, { method: 'POST', pathAndQuery: '/v1/agents/session', body });
  const beat = await fetch(new URL('/v1/agents/session', t.cp.url), { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
  expect(beat.status, await beat.text()).toBe(200);
}

/** acme's objects, made through the API by acme's own credential (the join request has no API that makes it: see below). */
async function makeOwnerObjects(client: ApiClient): Promise<TenantObjects> {
  const site = await client.call<{ id: string }>('POST', '/v1/sites', { tenantId: OWNER, kind: 'custom', region: 'acme-1', idempotencyKey: 'acme-site' });
  const token = await client.call<{ id: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: OWNER, ttlSeconds: 3600, maxUses: 2 });
  const pool = await client.call<{ id: string }>('POST', '/v1/pools', { tenantId: OWNER, siteId: site.id, class: 'acme-metal' });
  const enrolled = await client.call<MetalNodeView>('POST', '/v1/metal/nodes', {
    tenantId: OWNER,
    poolId: pool.id,
    bmc: { driver: 'redfish', address: 'https://10.0.77.1', username: 'admin', password: 'acme-bmc-password' },
    macs: ['b8:ce:f6:77:00:02'],
  });
  const image = await client.call<{ id: string }>('POST', '/v1/images', {
    tenantId: OWNER,
    ref: 'acme-os@1',
    kind: 'os',
    format: 'raw',
    compression: 'none',
    sha256: 'cd'.repeat(32),
    sizeBytes: 4096,
    source: 'https://images.acme.example/os.raw',
  });
  const profile = await client.call<{ id: string }>('POST', '/v1/profiles', {
    tenantId: OWNER,
    document: { id: 'acme-private-layout', version: 1, target: 'metal', steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' } }] },
  });
  const credential = await mint(OWNER, 'acme-reader', ['compute:events:read']);
  const check = await client.call<{ id: string }>('POST', '/v1/system/checks', { tenantId: OWNER });
  await until(
    () => client.call<{ status: string }>('GET', `/v1/system/checks/${check.id}?tenantId=${OWNER}`),
    (c) => c.status === 'succeeded',
    20_000,
    'the system check',
  );
  // A deferred discovery join is what makes join requests (a ramdisk booted through the site's
  // attestor); the row is all the routes read, so it is written as that join would write it.
  const joinRequestId = newId('joinRequest');
  await t.cp.db.joinRequest.create({
    data: { id: joinRequestId, tenantId: OWNER, siteId: site.id, status: 'open', mac: '52:54:00:77:00:03', expiresAt: new Date(Date.now() + 3_600_000) },
  });
  const discoveredSite = await client.call<{ id: string }>('POST', '/v1/sites', {
    tenantId: OWNER,
    kind: 'custom',
    region: 'acme-2',
    idempotencyKey: 'acme-discovery-site',
  });
  await reportDiscovered(client, discoveredSite.id);

  // The node's enrolling workflow waits for a site agent acme's first site never gets: still from then on.
  const waiting = await until(
    () =>
      client.call<{ workflow: { workflowId: string } | null; waitingFor: string | null }>('GET', `/v1/metal/nodes/${enrolled.nodeId}/status?tenantId=${OWNER}`),
    (s) => s.waitingFor !== null && s.workflow !== null,
    20_000,
    "the node's wait for a site agent",
  );
  // A bulk run the node's state refuses (it is enrolling), ended before the probes start.
  const bulk = await client.call<{ bulkId: string }>('POST', '/v1/metal/bulk', {
    tenantId: OWNER,
    poolId: pool.id,
    verb: 'provide',
    nodeIds: [enrolled.nodeId],
    reason: 'isolation',
  });
  await until(
    () => client.call<{ status: string }>('GET', `/v1/metal/bulk/${bulk.bulkId}?tenantId=${OWNER}`),
    (b) => b.status !== 'running',
    20_000,
    'the bulk run',
  );
  // A quorum policy, and a bulk run under it (its batch; the run ends at once, as above).
  await client.call('PUT', '/v1/quorum/policy', { tenantId: OWNER, required: 1, approvers: [probeApprover] });
  const underQuorum = await client.call<{ bulkId: string }>('POST', '/v1/metal/bulk', {
    tenantId: OWNER,
    poolId: pool.id,
    verb: 'provide',
    nodeIds: [enrolled.nodeId],
    reason: 'isolation quorum',
  });
  await until(
    () => client.call<{ status: string }>('GET', `/v1/metal/bulk/${underQuorum.bulkId}?tenantId=${OWNER}`),
    (b) => b.status !== 'running',
    20_000,
    'the bulk run under quorum',
  );
  const batch = await t.cp.db.quorumBatch.findFirstOrThrow({ where: { subject: underQuorum.bulkId } });
  return {
    tenantId: OWNER,
    siteId: site.id,
    siteTokenId: token.id,
    poolId: pool.id,
    nodeId: enrolled.nodeId,
    workflowId: waiting.workflow?.workflowId as string,
    imageId: image.id,
    profileId: profile.id,
    credentialId: credential.id,
    joinRequestId,
    checkId: check.id,
    discoveredSiteId: discoveredSite.id,
    bulkId: bulk.bulkId,
    batchId: batch.id,
  };
}

/**
 * The one row that moves with time rather than with requests: the boot lease of the site whose
 * agent reported once, which the site's boot workflow ticks (and lets lapse) on its own.
 */
const movesWithTime = (model: string, row: Record<string, unknown>) => model === 'BootLease' && row.siteId === owned.discoveredSiteId;

/** Every row of every table (the models Prisma knows, so a new table is covered too), each table's rows sorted. */
async function snapshotDatabase(): Promise<Record<string, string[]>> {
  const delegates = t.cp.db as unknown as Record<string, { findMany(): Promise<Array<Record<string, unknown>>> }>;
  const tables: Record<string, string[]> = {};
  for (const model of Object.values(Prisma.ModelName)) {
    const rows = await delegates[model.charAt(0).toLowerCase() + model.slice(1)]?.findMany();
    if (!rows) throw new Error(`no Prisma delegate for model ${model}`);
    tables[model] = rows
      .filter((row) => !movesWithTime(model, row))
      .map((row) => JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)))
      .sort();
  }
  return tables;
}

/** A refusal may leave its security event (the codec records each one); nothing else may appear. */
const isRefusalEvent = (row: string) => /"type":"security\.[a-z.-]+\.refused"/.test(row);

function changedTables(before: Record<string, string[]>, after: Record<string, string[]>): string[] {
  return Object.keys(before).filter((table) => {
    const was = before[table] ?? [];
    const now = after[table] ?? [];
    if (table === 'Event') return !was.every((row) => now.includes(row)) || !now.filter((row) => !was.includes(row)).every(isRefusalEvent);
    return JSON.stringify(was) !== JSON.stringify(now);
  });
}

const ownerEventCount = () => t.cp.db.event.count({ where: { tenantId: OWNER } });

interface Answer {
  status: number;
  text: string;
  error?: ErrorBody['error'];
}

async function send(client: ApiClient, route: OpenApiRoute, request: RouteRequest): Promise<Answer> {
  const res = await client.request<ErrorBody | string>(route.method, urlOf(route, request), request.body);
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '');
  return { status: res.status, text, ...(typeof res.body === 'object' && res.body?.error ? { error: res.body.error } : {}) };
}

/** The object ids of a set, longest first (a workflow id holds its node's id). */
const idsOf = (objects: TenantObjects) =>
  Object.entries(objects)
    .filter(([name]) => name !== 'tenantId')
    .map(([, id]) => id)
    .sort((a, b) => b.length - a.length);

/** acme's object ids an answer names that the request itself did not. */
function leaked(answer: Answer, request: RouteRequest): string[] {
  const asked = JSON.stringify(request);
  return idsOf(owned).filter((id) => answer.text.includes(id) && !asked.includes(id));
}

/** Problems with one answer, as lines naming who asked and what came back. */
function expectError(who: string, answer: Answer, status: number, code: string): string[] {
  if (answer.status === status && answer.error?.code === code && (errorCodes as readonly string[]).includes(code)) return [];
  return [`${who}: expected ${status} ${code}, got ${answer.status} ${answer.text.slice(0, 300)}`];
}

type Classified = [string, Exclude<RouteSpec, { access: 'public' }>];
const credentialed = Object.entries(routeSpecs).filter((entry): entry is Classified => entry[1].access !== 'public');
type Public = [string, Extract<RouteSpec, { access: 'public' }> & { request: NonNullable<Extract<RouteSpec, { access: 'public' }>['request']> }];
/** Public routes that act on something (agents', join, the console's forms). */
const publicActions = Object.entries(routeSpecs).filter((entry): entry is Public => entry[1].access === 'public' && entry[1].request !== undefined);

beforeAll(async () => {
  t = await startTestControlPlane();
  routes = await routesToCover(t.cp.url, t.cp.api);
  await t.root.call('POST', '/v1/tenants', { id: OWNER, name: 'Acme' });
  await t.root.call('POST', '/v1/tenants', { id: OTHER, name: 'Umbrella' });
  ownerAll = t.anonymous.withCredential((await mint(OWNER, 'acme-all', ['*'])).credential);
  otherAll = t.anonymous.withCredential((await mint(OTHER, 'umbrella-all', ['*'])).credential);
  for (const permission of permissions) {
    const lacking = await mint(
      OWNER,
      `acme-without-${permission.replaceAll(':', '-')}`,
      permissions.filter((p) => p !== permission),
    );
    ownerLacking.set(permission, t.anonymous.withCredential(lacking.credential));
    const operator = await mint(
      'root',
      `root-without-${permission.replaceAll(':', '-')}`,
      permissions.filter((p) => p !== permission),
    );
    rootLacking.set(permission, t.anonymous.withCredential(operator.credential));
  }
  owned = await makeOwnerObjects(ownerAll);
}, 120_000);
afterAll(async () => t?.close());

describe('the route table', () => {
  it('classifies every route × method of the OpenAPI document, and names no route the document lacks', () => {
    expect(routes.length).toBeGreaterThan(60);
    const { missing, stale } = unclassified(routes);
    expect(missing, 'routes with no row in test/helpers/openapi-routes.ts routeSpecs: classify each (permission and request, or public with a reason)').toEqual(
      [],
    );
    expect(stale, 'rows for routes the document no longer lists').toEqual([]);
  });

  it("has acme's objects in place: acme's own full credential reads each one", async () => {
    for (const [key, spec] of credentialed) {
      const route = routes.find((r) => r.key === key);
      if (!route || route.method !== 'GET' || spec.access !== 'tenant') continue;
      const request = spec.request(owned, OWNER);
      const answer = await send(ownerAll, route, request);
      expect(answer.status, `${key}: ${answer.text.slice(0, 300)}`).toBe(200);
      // A list shows some acme object: the same list for umbrella must not.
      if (spec.crossTenant === 'own-list') expect(leaked(answer, {}).length, `${key} lists none of acme's objects`).toBeGreaterThan(0);
    }
    const discovered = await ownerAll.call<{ items: unknown[] }>('GET', `/v1/sites/${owned.discoveredSiteId}/discovered?tenantId=${OWNER}`);
    expect(discovered.items).toHaveLength(1);
    expect(await t.cp.db.joinToken.findUnique({ where: { id: owned.siteTokenId } })).toMatchObject({ revokedAt: null });
  });

  it("keeps acme's database still between probes (the control for the checks below)", async () => {
    const before = await snapshotDatabase();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(changedTables(before, await snapshotDatabase())).toEqual([]);
  });
});

describe.each(credentialed)('%s', (key, spec) => {
  it('refuses no credential, a credential lacking the permission and another tenant, and changes nothing', async () => {
    const route = routes.find((r) => r.key === key);
    expect(route, `${key} is in the table but not in the OpenAPI document`).toBeDefined();
    if (!route) return;
    const before = await snapshotDatabase();
    const eventsBefore = await ownerEventCount();
    const problems: string[] = [];
    const asOwner = spec.access === 'tenant' ? spec.request(owned, OWNER) : spec.request(owned);

    problems.push(...expectError('no credential', await send(t.anonymous, route, asOwner), 401, 'UNAUTHENTICATED'));

    const lackingWho = `${spec.access === 'root' ? 'an operator' : 'acme'} without ${spec.permission}`;
    const lacking = await send((spec.access === 'root' ? rootLacking : ownerLacking).get(spec.permission) as ApiClient, route, asOwner);
    problems.push(...expectError(lackingWho, lacking, 403, 'PERMISSION_DENIED'));
    if (lacking.error && !lacking.error.message.includes(spec.permission))
      problems.push(`${lackingWho}: the refusal does not name the permission: ${lacking.error.message}`);

    if (spec.access === 'root') {
      // Only the platform's operators: any other tenant's credential, however full, is refused.
      problems.push(...expectError('acme with every permission', await send(ownerAll, route, asOwner), 403, 'PERMISSION_DENIED'));
      problems.push(...expectError('umbrella with every permission', await send(otherAll, route, asOwner), 403, 'PERMISSION_DENIED'));
    } else {
      // umbrella naming acme: refused before any lookup, so no acme object is confirmed or shown.
      const named = await send(otherAll, route, asOwner);
      problems.push(...expectError('umbrella naming acme', named, 403, 'PERMISSION_DENIED'));
      for (const id of leaked(named, asOwner)) problems.push(`umbrella naming acme: the answer shows acme's ${id}`);

      if (spec.crossTenant !== 'own-create') {
        const asOther = spec.request(owned, OTHER);
        const own = await send(otherAll, route, asOther);
        if (spec.crossTenant === 'not-found') {
          problems.push(...expectError("umbrella on acme's objects", own, 404, 'NOT_FOUND'));
          // No oracle: acme's objects answer exactly as ids nobody holds do, but for the id itself.
          const asked = spec.request(nobodys, OTHER);
          const ghost = await send(otherAll, route, asked);
          const [ownText, ghostText] = [own.text, ghost.text].map((text, i) =>
            idsOf(i === 0 ? owned : nobodys).reduce((out, id) => out.replaceAll(id, '<id>'), text),
          );
          if (ghost.status !== own.status || ownText !== ghostText)
            problems.push(
              `acme's objects answer otherwise than no one's: ${own.status} ${ownText.slice(0, 200)} vs ${ghost.status} ${ghostText.slice(0, 200)}`,
            );
        } else if (own.status !== 200) problems.push(`umbrella's own list: expected 200, got ${own.status} ${own.text.slice(0, 300)}`);
        for (const id of leaked(own, asOther)) problems.push(`umbrella: the answer shows acme's ${id}`);
        if (own.text.includes(`"tenantId":"${OWNER}"`)) problems.push(`umbrella: the answer holds a row of tenant ${OWNER}: ${own.text.slice(0, 300)}`);
      }
    }

    const changed = changedTables(before, await snapshotDatabase());
    if (changed.length > 0) problems.push(`the database changed: ${changed.join(', ')} (acme's events ${eventsBefore} → ${await ownerEventCount()})`);
    expect(problems).toEqual([]);
  });
});

describe.each(publicActions)('%s (public)', (key, spec) => {
  it("is not opened by an API credential: a tenant's full bearer on acme's objects is refused and changes nothing", async () => {
    const route = routes.find((r) => r.key === key);
    expect(route, `${key} is in the table but not served`).toBeDefined();
    if (!route) return;
    const before = await snapshotDatabase();
    const answer = await send(otherAll, route, spec.request(owned));
    // fetch follows the console's redirect to its sign-in page: that is the refusal a browser sees.
    const refused = answer.status >= 300 || answer.text.includes('<title>Sign in');
    expect(refused, `${spec.reason}: ${answer.status} ${answer.text.slice(0, 300)}`).toBe(true);
    expect(answer.status).toBeLessThan(500);
    expect(leaked(answer, spec.request(owned))).toEqual([]);
    expect(changedTables(before, await snapshotDatabase())).toEqual([]);
  });
});
