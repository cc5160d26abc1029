// Profiles through the API and the CLI: create, lookup order, validate, render, update,
// immutability once used.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProfileView } from '../../core/schemas/profiles';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';

let t: TestControlPlane;
let other: ReturnType<TestControlPlane['root']['withCredential']>;
beforeAll(async () => {
  t = await startTestControlPlane({ worker: false });
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  const cred = await t.root.call<{ credential: string }>('POST', '/v1/credentials', {
    tenantId: 'acme',
    name: 'ops',
    permissions: ['compute:profiles:manage', 'compute:profiles:read'],
  });
  other = t.root.withCredential(cred.credential);
});
afterAll(async () => t?.close());

const doc = (id: string, version = 1, message = 'hello') => ({ id, version, target: 'metal', steps: [{ use: 'event.append', with: { message } }] });

describe('profiles API', () => {
  it('refuses a bad document with INVALID_INPUT at the path of its first problem, listing them all', async () => {
    const bad = {
      ...doc('bad'),
      steps: [
        { use: 'event.append', with: { message: 'x' } },
        { use: 'power.setPower', on: 'site', with: { action: 'cycle' }, timeout: 'soon' },
        { use: 'disk.wipe' },
      ],
    };
    const res = await t.root.request<{ error: { code: string; details: { path: string; problems: Array<{ path: string }> } } }>('POST', '/v1/profiles', {
      tenantId: 'root',
      document: bad,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    expect(res.body.error.details.path).toBe('document.steps[1].timeout');
    expect(res.body.error.details.problems.map((p) => p.path)).toEqual(['document.steps[1].timeout', 'document.steps[2].on']);
    const secret = await t.root.request<{ error: { details: { path: string } } }>('POST', '/v1/profiles', {
      tenantId: 'root',
      document: { ...doc('sec'), steps: [{ use: 'event.append', with: { message: 'x', apiKey: 'k' } }] },
    });
    expect(secret.body.error.details.path).toBe('document.steps[0].with.apiKey');
  });

  it('looks up the tenant’s own profile, then a public stored one, then a shipped one', async () => {
    // Shipped: visible to every tenant under builtin.
    const shipped = await other.call<ProfileView>('GET', '/v1/profiles/remediate-reboot?tenantId=acme');
    expect(shipped).toMatchObject({ tenantId: 'builtin', visibility: 'builtin', version: 1, locked: true });
    // A shipped id is reserved (test/integration/profile-hijack.test.ts); for any other id,
    // root's public one is what acme sees until it stores its own.
    await t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: doc('fleet-reboot', 1, 'root public'), public: true });
    expect(await other.call<ProfileView>('GET', '/v1/profiles/fleet-reboot?tenantId=acme')).toMatchObject({ tenantId: 'root', visibility: 'public' });
    // Acme's own wins over root's public one.
    await other.call('POST', '/v1/profiles', { tenantId: 'acme', document: doc('fleet-reboot', 1, 'acme own') });
    expect(await other.call<ProfileView>('GET', '/v1/profiles/fleet-reboot?tenantId=acme')).toMatchObject({ tenantId: 'acme', visibility: 'private' });
    // A private profile of another tenant is invisible.
    await t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: doc('root-only') });
    expect((await other.request('GET', '/v1/profiles/root-only?tenantId=acme')).status).toBe(404);
    // Latest version by default, a given one on request.
    await other.call('POST', '/v1/profiles', { tenantId: 'acme', document: doc('fleet-reboot', 2, 'acme v2') });
    expect((await other.call<ProfileView>('GET', '/v1/profiles/fleet-reboot?tenantId=acme')).version).toBe(2);
    expect((await other.call<ProfileView>('GET', '/v1/profiles/fleet-reboot/versions/1?tenantId=acme')).document).toMatchObject({
      steps: [{ with: { message: 'acme own' } }],
    });
    const duplicate = await other.request<{ error: { code: string } }>('POST', '/v1/profiles', { tenantId: 'acme', document: doc('fleet-reboot', 2) });
    expect(duplicate.body.error.code).toBe('CONFLICT');
    const listed = await other.call<{ profiles: ProfileView[] }>('GET', '/v1/profiles?tenantId=acme&id=fleet-reboot');
    expect(listed.profiles.map((p) => `${p.tenantId}:${p.version}`)).toEqual(['acme:1', 'root:1', 'acme:2']);
  });

  it('updates a document or the visibility with --if-version; a used version is immutable', async () => {
    const created = await t.root.call<ProfileView>('POST', '/v1/profiles', { tenantId: 'root', document: doc('upd') });
    const changed = await t.root.call<ProfileView>('PATCH', '/v1/profiles/upd', {
      tenantId: 'root',
      document: doc('upd', 1, 'changed'),
      ifVersion: created.rowVersion,
    });
    expect(changed.rowVersion).toBe(created.rowVersion + 1);
    const stale = await t.root.request<{ error: { code: string } }>('PATCH', '/v1/profiles/upd', {
      tenantId: 'root',
      visibility: 'public',
      ifVersion: created.rowVersion,
    });
    expect(stale.body.error.code).toBe('CONFLICT');
    expect((await t.root.call<ProfileView>('PATCH', '/v1/profiles/upd', { tenantId: 'root', visibility: 'public' })).visibility).toBe('public');
    const both = await t.root.request<{ error: { code: string } }>('PATCH', '/v1/profiles/upd', {
      tenantId: 'root',
      visibility: 'public',
      document: doc('upd'),
    });
    expect(both.body.error.code).toBe('INVALID_INPUT');
    const renamed = await t.root.request<{ error: { details: { path: string } } }>('PATCH', '/v1/profiles/upd', { tenantId: 'root', document: doc('other') });
    expect(renamed.body.error.details.path).toBe('document.id');
    await t.cp.db.profile.updateMany({ where: { profileId: 'upd' }, data: { lockedAt: new Date() } });
    const locked = await t.root.request<{ error: { code: string } }>('PATCH', '/v1/profiles/upd', { tenantId: 'root', document: doc('upd', 1, 'again') });
    expect(locked.body.error.code).toBe('INVALID_STATE');
    expect((await other.request('PATCH', '/v1/profiles/remediate-reboot', { tenantId: 'acme', visibility: 'private', version: 99 })).status).toBe(404);
  });

  it('validate reports every problem of a stored version; render shows the plan', async () => {
    // A version stored before its steps changed (written directly, as an older release would have).
    await t.cp.db.profile.create({
      data: {
        tenantId: 'root',
        profileId: 'stale',
        version: 1,
        visibility: 'private',
        document: { id: 'stale', version: 1, target: 'metal', steps: [{ use: 'event.append' }, { use: 'power.reboot', on: 'site' }] },
      },
    });
    const result = await t.root.call<{ valid: boolean; problems: Array<{ path: string }> }>('POST', '/v1/profiles/stale/validate', { tenantId: 'root' });
    expect(result.valid).toBe(false);
    expect(result.problems.map((p) => p.path)).toEqual(['steps[0].with.message', 'steps[1].use']);
    const plan = await other.call<{ profile: { ref: string }; steps: Array<{ activity: string; route: string }> }>(
      'GET',
      '/v1/profiles/fleet-reboot/render?tenantId=acme',
    );
    expect(plan.profile.ref).toBe('fleet-reboot@2'); // acme's own latest
    expect(plan.steps.map((s) => s.activity)).toEqual(['event.append']);
  });

  it('the CLI creates, validates and renders', async () => {
    const file = path.join(t.config.dataDir, 'cli-profile.json');
    writeFileSync(file, JSON.stringify({ ...doc('cli-prof'), steps: [{ use: 'power.setPower', on: 'site', with: { action: 'cycle' }, timeout: '2m' }] }));
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const created = await runCli(['profiles', 'create', file, '--public', '--format', 'json'], env);
    expect(created.stderr).toBe('');
    expect(JSON.parse(created.stdout)).toMatchObject({ id: 'cli-prof', visibility: 'public' });
    const valid = await runCli(['profiles', 'validate', 'cli-prof', '--profile-version', '1'], env);
    expect(valid.stderr).toContain('cli-prof@1: valid');
    const rendered = await runCli(['profiles', 'render', 'cli-prof'], env);
    expect(JSON.parse(rendered.stdout).steps[0]).toMatchObject({ activity: 'power.setPower', route: 'site-agent', timeoutMs: 120_000 });
    writeFileSync(file, JSON.stringify({ ...doc('cli-bad'), steps: [{ use: 'power.setPower', on: 'site', with: { action: 'cycle' }, timeout: '2 minutes' }] }));
    const bad = await runCli(['profiles', 'create', file], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('(at document.steps[0].timeout)');
  });
});
