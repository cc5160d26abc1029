// pools.* through the real API and `ironflow pools`: one site and one tenant per pool, a
// strictly validated policy, idempotent create, versioned update, delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../cli/api-client';
import type { PoolView } from '../../core/schemas/pools';
import type { SiteView } from '../../core/schemas/sites';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let site: SiteView;
let acme: ApiClient;
let acmeSite: SiteView;

interface ApiError {
  error: { code: string; details: { path?: string } };
}

beforeAll(async () => {
  t = await startTestControlPlane();
  site = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'eu-central-1', idempotencyKey: 'pools-site' });
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  const cred = await t.root.call<{ credential: string }>('POST', '/v1/credentials', {
    tenantId: 'acme',
    name: 'acme',
    permissions: ['compute:sites:manage', 'compute:sites:read'],
  });
  acme = t.root.withCredential(cred.credential);
  acmeSite = await acme.call<SiteView>('POST', '/v1/sites', { tenantId: 'acme', kind: 'custom', region: 'r1', idempotencyKey: 'acme-site' });
});
afterAll(async () => t?.close());

const policy = {
  hardwareProfile: 'gpu-redfish',
  prewarmImages: ['ubuntu-24.04@2025.06.1'],
  trustProvisioningNetwork: true,
  agent: 'none',
  acceptanceChecks: [{ name: 'gpu-burn', timeoutSeconds: 1800, params: { minutes: 10 } }],
};

describe('pools', () => {
  it('creates, reads and lists a pool with its policy, filling defaults', async () => {
    const created = await acme.request<PoolView>('POST', '/v1/pools', { tenantId: 'acme', siteId: acmeSite.id, class: 'gpu-h100', policy });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ tenantId: 'acme', siteId: acmeSite.id, class: 'gpu-h100', version: 1, policy });
    const plain = await acme.call<PoolView>('POST', '/v1/pools', { tenantId: 'acme', siteId: acmeSite.id, class: 'general' });
    expect(plain.policy).toEqual({
      prewarmImages: [],
      trustProvisioningNetwork: false,
      agent: 'ironflow',
      acceptanceChecks: [],
      stepTimeouts: {},
      allowEmulatedMachines: false,
      retireWipe: { mode: 'crypto-erase', fallback: 'fail' },
    });

    expect(await acme.call('GET', `/v1/pools/${created.body.id}?tenantId=acme`)).toEqual(created.body);
    const list = await acme.call<{ pools: PoolView[] }>('GET', `/v1/pools?tenantId=acme&siteId=${acmeSite.id}`);
    expect(list.pools.map((p) => p.id)).toEqual([created.body.id, plain.id]);
    // Another tenant's pool is NOT_FOUND, also to root acting for root.
    expect((await t.root.request<ApiError>('GET', `/v1/pools/${created.body.id}?tenantId=root`)).body.error.code).toBe('NOT_FOUND');
    // A pool on a site the tenant does not own is NOT_FOUND.
    expect((await acme.request<ApiError>('POST', '/v1/pools', { tenantId: 'acme', siteId: site.id, class: 'x' })).body.error.code).toBe('NOT_FOUND');
  });

  it('validates the policy strictly, with the offending path', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ agent: 'bcd' }, 'policy.agent'],
      [{ prewarmImages: ['no-version'] }, 'policy.prewarmImages[0]'],
      [{ trustProvisioningNetwork: 'yes' }, 'policy.trustProvisioningNetwork'],
      [{ acceptanceChecks: [{ name: 'ok', timeoutSeconds: 0 }] }, 'policy.acceptanceChecks[0].timeoutSeconds'],
      [{ retireWipe: { mode: 'shred' } }, 'policy.retireWipe.mode'],
      [{ retireWipe: { mode: 'quick', fallback: 'secure-erase' } }, 'policy.retireWipe.fallback'],
      [{ surprise: true }, 'policy'],
    ];
    for (const [bad, p] of cases) {
      const r = await t.root.request<ApiError>('POST', '/v1/pools', { tenantId: 'root', siteId: site.id, class: 'c', policy: bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error.code).toBe('INVALID_INPUT');
      expect(r.body.error.details.path).toBe(p);
    }
  });

  it('answers the same pool to a retry with the same key, CONFLICT to a different request', async () => {
    const input = { tenantId: 'root', siteId: site.id, class: 'storage', idempotencyKey: 'pool-1' };
    const answers = await Promise.all([0, 1, 2].map(() => t.root.request<PoolView>('POST', '/v1/pools', input)));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    const different = await t.root.request<ApiError>('POST', '/v1/pools', { ...input, class: 'other' });
    expect(different.body.error.code).toBe('CONFLICT');
  });

  it('updates class and policy fields with the version read; a stale version is CONFLICT', async () => {
    const pool = await t.root.call<PoolView>('POST', '/v1/pools', { tenantId: 'root', siteId: site.id, class: 'c1', policy: { hardwareProfile: 'hp1' } });
    const v2 = await t.root.call<PoolView>('PATCH', `/v1/pools/${pool.id}`, { tenantId: 'root', version: 1, policy: { prewarmImages: ['talos@1.9.0'] } });
    expect(v2).toMatchObject({ version: 2, class: 'c1', policy: { hardwareProfile: 'hp1', prewarmImages: ['talos@1.9.0'] } });
    const v3 = await t.root.call<PoolView>('PATCH', `/v1/pools/${pool.id}`, { tenantId: 'root', class: 'c2', policy: { hardwareProfile: null } });
    expect(v3.version).toBe(3);
    expect(v3.class).toBe('c2');
    expect(v3.policy.hardwareProfile).toBeUndefined();
    // Only the change of prewarmImages announces the site's new desired cache.
    const announced = await t.cp.db.event.findMany({ where: { type: 'site.spec.changed', subjectId: site.id } });
    expect(announced.map((e) => e.data)).toEqual([expect.objectContaining({ field: 'cacheImages', poolId: pool.id, prewarmImages: ['talos@1.9.0'] })]);
    const stale = await t.root.request<ApiError>('PATCH', `/v1/pools/${pool.id}`, { tenantId: 'root', version: 2, class: 'c3' });
    expect(stale.body.error.code).toBe('CONFLICT');
    const racing = await Promise.all(['a1', 'a2'].map((c) => t.root.request('PATCH', `/v1/pools/${pool.id}`, { tenantId: 'root', version: 3, class: c })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('refuses a pool on a deleted site (INVALID_STATE), and deletes pools', async () => {
    const doomed = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'r1', idempotencyKey: 'doomed' });
    const pool = await t.root.call<PoolView>('POST', '/v1/pools', { tenantId: 'root', siteId: doomed.id, class: 'c' });
    expect(await t.root.call('DELETE', `/v1/pools/${pool.id}?tenantId=root`)).toEqual({ deleted: true });
    expect((await t.root.request('GET', `/v1/pools/${pool.id}?tenantId=root`)).status).toBe(404);
    await t.root.call('DELETE', `/v1/sites/${doomed.id}?tenantId=root`);
    const late = await t.root.request<ApiError>('POST', '/v1/pools', { tenantId: 'root', siteId: doomed.id, class: 'c' });
    expect(late.body.error.code).toBe('INVALID_STATE');
  });

  it('runs ironflow pools create/list/update', async () => {
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const made = await runCli(
      ['pools', 'create', '--site', site.id, '--class', 'gpu', '--prewarm-image', 'a@1', '--prewarm-image', 'b@2', '--agent', 'none', '--format', 'json'],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const pool = JSON.parse(made.stdout) as PoolView;
    expect(pool.policy).toMatchObject({ prewarmImages: ['a@1', 'b@2'], agent: 'none', trustProvisioningNetwork: false });
    const updated = await runCli(['pools', 'update', pool.id, '--trust-provisioning-network', '--version', '1', '--format', 'json'], env);
    expect(updated.code, updated.stderr).toBe(0);
    expect((JSON.parse(updated.stdout) as PoolView).policy).toMatchObject({ trustProvisioningNetwork: true, prewarmImages: ['a@1', 'b@2'] });
    const list = await runCli(['pools', 'list', '--site', site.id], env);
    expect(list.stdout).toContain(pool.id);
  });
});
