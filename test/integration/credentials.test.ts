// API credentials through the real API, database and CLI: a wrong secret for an existing
// id, expiry, revocation and rotation (each refused from the next request, with an event),
// listing without secrets, tenant scoping, no escalation, and no secret in any event.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../cli/api-client';
import type { CredentialView } from '../../core/schemas/credentials';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

type ErrorBody = { error: { code: string; message: string; details: { path?: string } } };
type EventRow = { type: string; subjectId: string | null; data: Record<string, unknown> };

let t: TestControlPlane;
/** acme's credential manager: may mint, list, revoke and rotate acme's credentials. */
let acmeManager: ApiClient;
let acmeManagerId: string;
/** Every bearer this file minted, to check no answer but its own, no event and no list holds one. */
const minted: string[] = [];

const secretOf = (bearer: string) => bearer.slice(bearer.lastIndexOf('.') + 1);
const idOf = (bearer: string) => bearer.slice('ifk_'.length, bearer.lastIndexOf('.'));

async function mint(client: ApiClient, body: Record<string, unknown>): Promise<CredentialView & { credential: string }> {
  const created = await client.call<CredentialView & { credential: string }>('POST', '/v1/credentials', body);
  minted.push(created.credential);
  return created;
}

const eventsOf = (tenantId: string, type: string) =>
  t.root.call<{ events: EventRow[] }>('GET', `/v1/events?tenantId=${tenantId}&type=${type}&limit=500`).then((page) => page.events);

/** A request that needs only compute:events:read on acme. */
const readAcme = (client: ApiClient) => client.request<ErrorBody>('GET', '/v1/events?tenantId=acme&limit=1');

beforeAll(async () => {
  t = await startTestControlPlane();
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  await t.root.call('POST', '/v1/tenants', { id: 'beta', name: 'Beta' });
  const manager = await mint(t.root, {
    tenantId: 'acme',
    name: 'acme-credentials',
    permissions: ['compute:credentials:manage', 'compute:credentials:read', 'compute:events:read'],
  });
  acmeManager = t.anonymous.withCredential(manager.credential);
  acmeManagerId = manager.id;
});
afterAll(async () => t?.close());

describe('authentication', () => {
  it('refuses an existing credential id with a wrong secret, without echoing the secret', async () => {
    const reader = await mint(acmeManager, { tenantId: 'acme', name: 'reader', permissions: ['compute:events:read'] });
    expect((await readAcme(t.anonymous.withCredential(reader.credential))).status).toBe(200);

    const wrongSecret = randomBytes(32).toString('base64url');
    const forged = `ifk_${reader.id}.${wrongSecret}`;
    const refused = await readAcme(t.anonymous.withCredential(forged));
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHENTICATED');
    expect(JSON.stringify(refused.body)).not.toContain(wrongSecret);
    // Another credential's real secret under this id is no better.
    const crossed = await readAcme(t.anonymous.withCredential(`ifk_${reader.id}.${secretOf(minted[0] as string)}`));
    expect(crossed.status).toBe(401);
  });

  it('refuses an expired credential, naming the expiry and not the secret', async () => {
    const expiresAt = new Date(Date.now() + 1500);
    const shortLived = await mint(acmeManager, {
      tenantId: 'acme',
      name: 'short-lived',
      permissions: ['compute:events:read'],
      expiresAt: expiresAt.toISOString(),
    });
    expect(shortLived.expiresAt).toBe(expiresAt.toISOString());
    const client = t.anonymous.withCredential(shortLived.credential);
    expect((await readAcme(client)).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 100));
    const refused = await readAcme(client);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHENTICATED');
    expect(refused.body.error.message).toMatch(/expired/);
    expect(refused.body.error.message).not.toContain(secretOf(shortLived.credential));
  });

  it('refuses to mint a credential that has already expired', async () => {
    const res = await acmeManager.request<ErrorBody>('POST', '/v1/credentials', {
      tenantId: 'acme',
      name: 'past',
      permissions: ['compute:events:read'],
      expiresAt: '2020-01-01T00:00:00Z',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    expect(res.body.error.details.path).toBe('expiresAt');
  });
});

describe('revocation', () => {
  it('refuses a revoked credential on its next request, with an event; a second revoke changes nothing', async () => {
    const reader = await mint(acmeManager, { tenantId: 'acme', name: 'to-revoke', permissions: ['compute:events:read'] });
    const client = t.anonymous.withCredential(reader.credential);
    expect((await readAcme(client)).status).toBe(200);

    const revoked = await acmeManager.call<CredentialView>('POST', `/v1/credentials/${reader.id}/revoke`, { tenantId: 'acme' });
    expect(revoked.revokedAt).not.toBeNull();
    expect(revoked).not.toHaveProperty('credential');
    const refused = await readAcme(client);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/revoked/);

    const again = await acmeManager.call<CredentialView>('POST', `/v1/credentials/${reader.id}/revoke`, { tenantId: 'acme' });
    expect(again.revokedAt).toBe(revoked.revokedAt);
    const events = (await eventsOf('acme', 'security.credential.revoked')).filter((e) => e.subjectId === reader.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toEqual({ by: acmeManagerId });
  });

  it("keeps the root tenant's last credential holding *", async () => {
    const res = await t.root.request<ErrorBody>('POST', `/v1/credentials/${idOf(t.cp.rootCredential.bearer)}/revoke`, { tenantId: 'root' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('INVALID_STATE');
    expect((await t.root.request('GET', '/v1/events?tenantId=root&limit=1')).status).toBe(200);
  });
});

describe('rotation', () => {
  it('gives the same credential a new secret: the old one is refused at once, the new one works', async () => {
    const reader = await mint(acmeManager, { tenantId: 'acme', name: 'to-rotate', permissions: ['compute:events:read'] });
    const rotated = await acmeManager.call<CredentialView & { credential: string }>('POST', `/v1/credentials/${reader.id}/rotate`, { tenantId: 'acme' });
    minted.push(rotated.credential);
    expect(rotated.id).toBe(reader.id);
    expect(rotated.permissions).toEqual(reader.permissions);
    expect(rotated.rotatedAt).not.toBeNull();
    expect(rotated.credential).not.toBe(reader.credential);

    expect((await readAcme(t.anonymous.withCredential(reader.credential))).status).toBe(401);
    expect((await readAcme(t.anonymous.withCredential(rotated.credential))).status).toBe(200);
    const events = (await eventsOf('acme', 'security.credential.rotated')).filter((e) => e.subjectId === reader.id);
    expect(events).toHaveLength(1);
  });

  it('refuses to rotate a revoked credential', async () => {
    const reader = await mint(acmeManager, { tenantId: 'acme', name: 'gone', permissions: ['compute:events:read'] });
    await acmeManager.call('POST', `/v1/credentials/${reader.id}/revoke`, { tenantId: 'acme' });
    const res = await acmeManager.request<ErrorBody & { credential?: string }>('POST', `/v1/credentials/${reader.id}/rotate`, { tenantId: 'acme' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('INVALID_STATE');
    expect(res.body.credential).toBeUndefined();
  });
});

describe('listing and scoping', () => {
  it("lists a tenant's credentials with their lifecycle and never a secret or a hash", async () => {
    const page = await acmeManager.call<{ credentials: CredentialView[]; nextCursor: string | null }>('GET', '/v1/credentials?tenantId=acme');
    expect(page.credentials.length).toBeGreaterThanOrEqual(5);
    expect(page.credentials.map((c) => c.name)).toEqual(expect.arrayContaining(['acme-credentials', 'reader', 'to-revoke', 'to-rotate']));
    expect(page.credentials.every((c) => c.tenantId === 'acme')).toBe(true);
    const listed = JSON.stringify(page);
    expect(listed).not.toMatch(/secretHash|"credential"/);
    for (const bearer of minted) expect(listed).not.toContain(secretOf(bearer));
    const short = page.credentials.find((c) => c.name === 'short-lived');
    expect(short?.expiresAt).not.toBeNull();

    const paged = await acmeManager.call<{ credentials: CredentialView[]; nextCursor: string | null }>('GET', '/v1/credentials?tenantId=acme&limit=2');
    expect(paged.credentials).toHaveLength(2);
    const next = await acmeManager.call<{ credentials: CredentialView[] }>('GET', `/v1/credentials?tenantId=acme&limit=2&cursor=${paged.nextCursor}`);
    expect(next.credentials[0]?.id).toBe(page.credentials[2]?.id);
  });

  it("answers another tenant's credential NOT_FOUND and changes nothing", async () => {
    const betaReader = await mint(t.root, { tenantId: 'beta', name: 'beta-reader', permissions: ['compute:events:read'] });
    for (const verb of ['revoke', 'rotate']) {
      const res = await acmeManager.request<ErrorBody>('POST', `/v1/credentials/${betaReader.id}/${verb}`, { tenantId: 'acme' });
      expect(res.status, verb).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const beta = await t.anonymous.withCredential(betaReader.credential).request('GET', '/v1/events?tenantId=beta&limit=1');
    expect(beta.status).toBe(200);
    const row = await t.cp.db.apiCredential.findUnique({ where: { id: betaReader.id } });
    expect(row?.revokedAt).toBeNull();
    expect(row?.rotatedAt).toBeNull();
    // Naming the other tenant is refused before any lookup.
    expect((await acmeManager.request('GET', '/v1/credentials?tenantId=beta')).status).toBe(403);
    expect((await acmeManager.request('POST', `/v1/credentials/${betaReader.id}/revoke`, { tenantId: 'beta' })).status).toBe(403);
  });

  it('grants, rotates and revokes only what the caller holds itself', async () => {
    const escalate = await acmeManager.request<ErrorBody>('POST', '/v1/credentials', { tenantId: 'acme', name: 'more', permissions: ['compute:sites:manage'] });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error.code).toBe('PERMISSION_DENIED');
    expect((await acmeManager.request('POST', '/v1/credentials', { tenantId: 'acme', name: 'all', permissions: ['*'] })).status).toBe(403);
    const acmeAll = await mint(t.root, { tenantId: 'acme', name: 'acme-all', permissions: ['*'] });
    for (const verb of ['rotate', 'revoke']) {
      expect((await acmeManager.request('POST', `/v1/credentials/${acmeAll.id}/${verb}`, { tenantId: 'acme' })).status, verb).toBe(403);
    }
    expect((await readAcme(t.anonymous.withCredential(acmeAll.credential))).status).toBe(200);
    const reader = await mint(t.root, { tenantId: 'acme', name: 'plain-reader', permissions: ['compute:events:read'] });
    const denied = await t.anonymous.withCredential(reader.credential).request('GET', '/v1/credentials?tenantId=acme');
    expect(denied.status).toBe(403);
  });
});

describe('ironflow credentials', () => {
  it('creates, lists, rotates and revokes through the CLI', async () => {
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const created = await runCli(
      ['credentials', 'create', '--tenant', 'beta', '--name', 'cli-made', '--permissions', 'compute:events:read', '--format', 'json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const made = JSON.parse(created.stdout) as CredentialView & { credential: string };
    minted.push(made.credential);
    expect(made.credential).toMatch(/^ifk_cred_/);

    const list = await runCli(['credentials', 'list', '--tenant', 'beta'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+PERMISSIONS/);
    expect(list.stdout).toContain(made.id);
    expect(list.stdout).not.toContain(secretOf(made.credential));

    const rotated = await runCli(['credentials', 'rotate', made.id, '--tenant', 'beta', '--format', 'json'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = (JSON.parse(rotated.stdout) as { credential: string }).credential;
    minted.push(fresh);
    const readBeta = (bearer: string) => t.anonymous.withCredential(bearer).request('GET', '/v1/events?tenantId=beta&limit=1');
    expect((await readBeta(made.credential)).status).toBe(401);
    expect((await readBeta(fresh)).status).toBe(200);

    const pasted = await runCli(['credentials', 'revoke', fresh, '--tenant', 'beta'], env);
    expect(pasted.code).toBe(1);
    expect(pasted.stderr).toMatch(/looks like the bearer itself/);
    expect(pasted.stderr).not.toContain(secretOf(fresh));

    const revoked = await runCli(['credentials', 'revoke', made.id, '--tenant', 'beta', '--format', 'json'], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((JSON.parse(revoked.stdout) as CredentialView).revokedAt).not.toBeNull();
    expect((await readBeta(fresh)).status).toBe(401);
  });
});

describe('the event log', () => {
  it('records created, revoked and rotated by ids only: no bearer or secret minted here appears', async () => {
    const all = [
      ...(await t.root.call<{ events: EventRow[] }>('GET', '/v1/events?tenantId=acme&type=security.credential&limit=500')).events,
      ...(await t.root.call<{ events: EventRow[] }>('GET', '/v1/events?tenantId=beta&type=security.credential&limit=500')).events,
    ];
    expect(new Set(all.map((e) => e.type))).toEqual(new Set(['security.credential.created', 'security.credential.revoked', 'security.credential.rotated']));
    const text = JSON.stringify(all);
    expect(minted.length).toBeGreaterThan(10);
    for (const bearer of minted) expect(text).not.toContain(secretOf(bearer));
    const hashes = await t.cp.db.apiCredential.findMany({ select: { secretHash: true } });
    for (const { secretHash } of hashes) expect(text).not.toContain(secretHash);
  });
});
