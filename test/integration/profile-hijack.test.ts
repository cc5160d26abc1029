// Profile hijack (issue 13): a tenant must not be able to make another tenant's metal verbs
// run its document. Through the real API, database and Temporal dev server: only root makes
// a profile public, no stored profile takes a shipped id, and a power verb runs the shipped
// plan even when the store holds a public row under that id (written directly, as a release
// before this fix would have stored it). No worker runs: the started workflow's input is read
// from its history.
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../core/plan';
import type { MetalNodeView } from '../../core/schemas/metal';
import type { ProfileView } from '../../core/schemas/profiles';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let acme: ReturnType<TestControlPlane['root']['withCredential']>;
let poolId: string;

type Refusal = { error: { code: string; message: string; details: { path?: string } } };

const doc = (id: string, version = 1) => ({ id, version, target: 'metal', steps: [{ use: 'event.append', with: { message: `${id} from a tenant` } }] });

beforeAll(async () => {
  t = await startTestControlPlane({ worker: false });
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  const cred = await t.root.call<{ credential: string }>('POST', '/v1/credentials', {
    tenantId: 'acme',
    name: 'ops',
    permissions: ['compute:profiles:manage', 'compute:profiles:read'],
  });
  acme = t.root.withCredential(cred.credential);
  const siteId = (
    await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-hijack', idempotencyKey: 'hijack-site' })
  ).id;
  poolId = (await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'metal-hijack' })).id;
});
afterAll(async () => t?.close());

/** The plan a workflow was started with: the first argument of its start event, opened with the control plane's data converter (histories are sealed). */
async function startedPlan(workflowId: string): Promise<Plan> {
  const history = await t.cp.temporal.workflow.getHandle(workflowId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  if (!payloads?.length) throw new Error(`workflow ${workflowId} has no input`);
  return decodeFromPayloadsAtIndex<Plan>(t.cp.temporal.options.loadedDataConverter, 0, payloads);
}

describe('profile hijack', () => {
  it('only root makes a profile public: at creation and by an update', async () => {
    const created = await acme.request<Refusal>('POST', '/v1/profiles', { tenantId: 'acme', document: doc('acme-tools'), public: true });
    expect(created).toMatchObject({ status: 403, body: { error: { code: 'PERMISSION_DENIED', details: { path: 'public' } } } });
    expect(created.body.error.message).toContain('root');
    await acme.call('POST', '/v1/profiles', { tenantId: 'acme', document: doc('acme-tools') });
    const updated = await acme.request<Refusal>('PATCH', '/v1/profiles/acme-tools', { tenantId: 'acme', visibility: 'public' });
    expect(updated).toMatchObject({ status: 403, body: { error: { code: 'PERMISSION_DENIED', details: { path: 'visibility' } } } });
    expect((await acme.call<ProfileView>('GET', '/v1/profiles/acme-tools?tenantId=acme')).visibility).toBe('private');
    // Root's own may be public, for every tenant.
    expect((await t.root.call<ProfileView>('POST', '/v1/profiles', { tenantId: 'root', document: doc('fleet-tools'), public: true })).visibility).toBe(
      'public',
    );
    expect((await acme.call<ProfileView>('GET', '/v1/profiles/fleet-tools?tenantId=acme')).tenantId).toBe('root');
    const events = await t.cp.db.event.findMany({ where: { type: { in: ['profile.created', 'profile.updated'] }, subjectId: 'acme-tools' } });
    expect(events.map((e) => e.data)).toEqual([{ version: 1, visibility: 'private' }]);
  });

  it('no stored profile takes a shipped id: public or private, root included', async () => {
    for (const [client, tenantId, id, isPublic] of [
      [acme, 'acme', 'metal-power-on', true],
      [acme, 'acme', 'metal-power-on', false],
      [acme, 'acme', 'metal-release', false],
      [t.root, 'root', 'metal-release', true],
      [t.root, 'root', 'metal-power-off', false],
    ] as const) {
      const res = await client.request<Refusal>('POST', '/v1/profiles', { tenantId, document: doc(id), public: isPublic });
      // A public attempt by acme may be refused for either reason; both are refusals.
      if (tenantId === 'acme' && isPublic) expect([403, 409]).toContain(res.status);
      else expect(res).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT', details: { path: 'document.id' } } } });
    }
    expect(await t.cp.db.profile.count({ where: { profileId: { startsWith: 'metal-' } } })).toBe(0);
    expect(await acme.call<ProfileView>('GET', '/v1/profiles/metal-power-on?tenantId=acme')).toMatchObject({ tenantId: 'builtin', visibility: 'builtin' });
  });

  it('a power verb runs the shipped profile even when the store holds rows under its id', async () => {
    // Rows a release before this fix accepted: acme's public hijack (two versions) and root's own.
    for (const [tenantId, id, version, visibility] of [
      ['acme', 'metal-power-on', 1, 'public'],
      ['acme', 'metal-power-on', 2, 'public'],
      ['root', 'metal-power-off', 1, 'private'],
      ['acme', 'acme-legacy-public', 1, 'public'],
    ] as const) {
      await t.cp.db.profile.create({ data: { tenantId, profileId: id, version, visibility, document: doc(id, version) } });
    }
    // Lookups of a shipped id read the shipped profile; a non-root public row is no one else's.
    expect(await t.root.call<ProfileView>('GET', '/v1/profiles/metal-power-on?tenantId=root')).toMatchObject({ tenantId: 'builtin', version: 1 });
    expect(await t.root.call<ProfileView>('GET', '/v1/profiles/metal-power-on/versions/1?tenantId=root')).toMatchObject({ tenantId: 'builtin' });
    expect(await t.root.call<ProfileView>('GET', '/v1/profiles/metal-power-off?tenantId=root')).toMatchObject({ tenantId: 'builtin' });
    expect((await t.root.request('GET', '/v1/profiles/acme-legacy-public?tenantId=root')).status).toBe(404);
    const listed = await t.root.call<{ profiles: ProfileView[] }>('GET', '/v1/profiles?tenantId=root&id=metal-power-on');
    expect(listed.profiles.map((p) => `${p.tenantId}:${p.version}`)).toEqual(['builtin:1']);

    const node = await t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId,
      productUuid: '4c4c4544-0000-1000-8000-000000001301',
      bmc: { driver: 'ipmi', address: '10.0.13.1', username: 'admin', password: 'hijack-bmc' },
    });
    await t.cp.db.node.update({ where: { id: node.nodeId }, data: { provisionState: 'manageable', workflowId: null } });
    for (const action of ['on', 'off'] as const) {
      const powered = await t.root.call<MetalNodeView & { powerWorkflowId: string }>('POST', `/v1/metal/nodes/${node.nodeId}/power`, {
        tenantId: 'root',
        action,
      });
      const plan = await startedPlan(powered.powerWorkflowId);
      expect(plan.profile).toMatchObject({ tenantId: 'builtin', id: `metal-power-${action}`, version: 1 });
      expect(plan.steps.map((s) => s.activity)).toEqual(['power.setPower']);
      expect(plan.steps[0]?.with).toMatchObject({ action });
      const described = await t.cp.temporal.workflow.getHandle(powered.powerWorkflowId).describe();
      expect(described.memo).toMatchObject({ profile: `metal-power-${action}@1`, profileTenant: 'builtin' });
      await t.cp.temporal.workflow.getHandle(powered.powerWorkflowId).terminate('test done');
    }
    // The shipped profile ran: no stored row under a metal id was locked by a run.
    expect(await t.cp.db.profile.count({ where: { profileId: { startsWith: 'metal-' }, lockedAt: { not: null } } })).toBe(0);
  });
});
