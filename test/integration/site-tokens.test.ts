// siteTokens.* through the real API, and `ironflow site-tokens` as a subprocess against it.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../cli/api-client';
import type { SiteTokenView } from '../../core/schemas/site-tokens';
import type { SiteView } from '../../core/schemas/sites';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { workDir } from '../helpers/openssl';

let t: TestControlPlane;
let site: SiteView;
let acme: ApiClient;
let acmeSite: SiteView;

interface ApiError {
  error: { code: string; details: { path?: string } };
}
interface EventRow {
  type: string;
  subjectId: string | null;
  data: Record<string, unknown>;
}

beforeAll(async () => {
  t = await startTestControlPlane();
  site = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'eu-central-1', idempotencyKey: 'tokens-site' });
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

const create = (client: ApiClient, siteId: string, body: Record<string, unknown>) =>
  client.request<SiteTokenView & ApiError>('POST', `/v1/sites/${siteId}/tokens`, body);

describe('siteTokens.create', () => {
  it('mints a site token whose bearer is in the first answer only; a replay omits it', async () => {
    const input = { tenantId: 'root', ttlSeconds: 3600, maxUses: 2, idempotencyKey: 'fsn1-site-agents' };
    const started = Date.now();
    const first = await create(t.root, site.id, input);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ siteId: site.id, role: 'site', usesLeft: 2, maxUses: 2, revokedAt: null });
    expect(first.body.id).toMatch(/^jt_[0-9a-z]{26}$/);
    expect(first.body.token).toMatch(new RegExp(`^ifjt_${first.body.id}\\.[A-Za-z0-9_-]{43}$`));
    expect(Math.abs(Date.parse(first.body.expiresAt) - (started + 3600_000))).toBeLessThan(5_000);

    const replay = await create(t.root, site.id, input);
    expect(replay.status).toBe(200);
    expect(replay.body.id).toBe(first.body.id);
    expect(replay.body.token).toBeUndefined();
    // Only a hash is stored, and the event carries no secret.
    const secret = first.body.token!.split('.')[1]!;
    const row = await t.cp.db.joinToken.findUniqueOrThrow({ where: { id: first.body.id } });
    expect(JSON.stringify(row)).not.toContain(secret);
    const events = await t.root.call<{ events: EventRow[] }>('GET', '/v1/events?tenantId=root&type=security.site-token');
    const created = events.events.filter((e) => e.type === 'security.site-token.created' && e.subjectId === first.body.id);
    expect(created).toHaveLength(1);
    expect(JSON.stringify(events)).not.toContain(secret);

    const changed = await create(t.root, site.id, { ...input, maxUses: 3 });
    expect(changed.body.error.code).toBe('CONFLICT');
  });

  it('answers CONFLICT for the same key on another site, and one token to racing replays', async () => {
    const other = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'r2', idempotencyKey: 'tokens-site-2' });
    await create(t.root, site.id, { tenantId: 'root', ttlSeconds: 600, idempotencyKey: 'shared-key' });
    const elsewhere = await create(t.root, other.id, { tenantId: 'root', ttlSeconds: 600, idempotencyKey: 'shared-key' });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.error.code).toBe('CONFLICT');

    const racing = await Promise.all([0, 1, 2, 3].map(() => create(t.root, site.id, { tenantId: 'root', ttlSeconds: 600, idempotencyKey: 'race-key' })));
    expect(new Set(racing.map((r) => r.body.id)).size).toBe(1);
    expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
    expect(racing.filter((r) => r.body.token !== undefined)).toHaveLength(1);
  });

  it('checks ttl and maxUses bounds, ownership, and deleted sites', async () => {
    for (const [body, p] of [
      [{ ttlSeconds: 59 }, 'ttlSeconds'],
      [{ ttlSeconds: 86_401 }, 'ttlSeconds'],
      [{ ttlSeconds: 600, maxUses: 0 }, 'maxUses'],
      [{ ttlSeconds: 600, maxUses: 17 }, 'maxUses'],
    ] as const) {
      const r = await create(t.root, site.id, { tenantId: 'root', ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: p } });
    }
    expect((await create(t.root, site.id, { tenantId: 'root', ttlSeconds: 86_400, maxUses: 16 })).status).toBe(201);
    expect((await create(t.root, site.id, { tenantId: 'root', ttlSeconds: 60 })).body.usesLeft).toBe(1);

    // Only the owner mints: acme cannot for root's site, nor root in acme's name for its own site.
    expect((await create(acme, site.id, { tenantId: 'acme', ttlSeconds: 600 })).body.error.code).toBe('NOT_FOUND');
    expect((await create(t.root, acmeSite.id, { tenantId: 'root', ttlSeconds: 600 })).body.error.code).toBe('NOT_FOUND');
    expect((await create(acme, acmeSite.id, { tenantId: 'acme', ttlSeconds: 600 })).status).toBe(201);

    const doomed = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'r3', idempotencyKey: 'doomed' });
    await create(t.root, doomed.id, { tenantId: 'root', ttlSeconds: 600 }); // referenced → tombstone
    await t.root.call('DELETE', `/v1/sites/${doomed.id}?tenantId=root`);
    const late = await create(t.root, doomed.id, { tenantId: 'root', ttlSeconds: 600 });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('INVALID_STATE');
  });
});

describe('siteTokens.revoke', () => {
  it('revokes site tokens only, and publishes security.site-token.revoked', async () => {
    const token = await t.root.call<SiteTokenView>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
    const revoked = await t.root.call<SiteTokenView>('DELETE', `/v1/sites/${site.id}/tokens/${token.id}?tenantId=root`);
    expect(revoked.revokedAt).not.toBeNull();
    const again = await t.root.call<SiteTokenView>('DELETE', `/v1/sites/${site.id}/tokens/${token.id}?tenantId=root`);
    expect(again.revokedAt).toBe(revoked.revokedAt);
    const events = await t.root.call<{ events: EventRow[] }>('GET', '/v1/events?tenantId=root&type=security.site-token.revoked');
    expect(events.events.filter((e) => e.subjectId === token.id)).toHaveLength(1);

    // A node's join token (role provisioned, made by a later issue) is NOT_FOUND here.
    const nodeToken = 'jt_00000000000000000000000prv';
    await t.cp.db.joinToken.create({
      data: {
        id: nodeToken,
        tenantId: 'root',
        siteId: site.id,
        role: 'provisioned',
        secretHash: 'x',
        maxUses: 1,
        usesLeft: 1,
        expiresAt: new Date(Date.now() + 600_000),
      },
    });
    const notSite = await t.root.request<ApiError>('DELETE', `/v1/sites/${site.id}/tokens/${nodeToken}?tenantId=root`);
    expect(notSite.body.error.code).toBe('NOT_FOUND');
    expect((await t.cp.db.joinToken.findUniqueOrThrow({ where: { id: nodeToken } })).revokedAt).toBeNull();

    // Another tenant's token, or one named under another site, is NOT_FOUND.
    const acmeToken = await acme.call<SiteTokenView>('POST', `/v1/sites/${acmeSite.id}/tokens`, { tenantId: 'acme', ttlSeconds: 600 });
    expect((await t.root.request<ApiError>('DELETE', `/v1/sites/${acmeSite.id}/tokens/${acmeToken.id}?tenantId=root`)).body.error.code).toBe('NOT_FOUND');
    expect((await acme.request<ApiError>('DELETE', `/v1/sites/${site.id}/tokens/${acmeToken.id}?tenantId=acme`)).body.error.code).toBe('NOT_FOUND');
  });
});

describe('ironflow site-tokens (CLI)', () => {
  it('writes the bearer to a new 0600 file with --out, refuses an existing file, and revokes by id only', async () => {
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const dir = workDir();
    const out = path.join(dir, 'site-token');
    const made = await runCli(
      ['site-tokens', 'create', '--tenant', 'root', '--site', site.id, '--ttl', '3600', '--max-uses', '2', '--out', out, '--format', 'json'],
      env,
    );
    expect(made.stderr).toContain(out);
    expect(made.code).toBe(0);
    const answer = JSON.parse(made.stdout) as SiteTokenView & { tokenFile: string };
    expect(answer).toMatchObject({ siteId: site.id, role: 'site', usesLeft: 2, tokenFile: out });
    expect(answer.token).toBeUndefined();
    const bearer = readFileSync(out, 'utf8').trim();
    expect(bearer).toMatch(new RegExp(`^ifjt_${answer.id}\\.`));
    expect(made.stdout + made.stderr).not.toContain(bearer.split('.')[1]!);
    expect(statSync(out).mode & 0o777).toBe(0o600);

    // An existing file is refused before anything is minted.
    const tokensBefore = await t.cp.db.joinToken.count();
    writeFileSync(path.join(dir, 'taken'), 'keep me');
    const refused = await runCli(['site-tokens', 'create', '--site', site.id, '--ttl', '600', '--out', path.join(dir, 'taken')], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('exists');
    expect(readFileSync(path.join(dir, 'taken'), 'utf8')).toBe('keep me');
    expect(await t.cp.db.joinToken.count()).toBe(tokensBefore);

    // Without --out the bearer is printed, once.
    const printed = await runCli(['site-tokens', 'create', '--site', site.id, '--ttl', '600', '--format', 'json'], env);
    expect(printed.code).toBe(0);
    expect((JSON.parse(printed.stdout) as { token: string }).token).toMatch(/^ifjt_jt_/);

    // A pasted bearer is never sent as an id.
    const pasted = await runCli(['site-tokens', 'revoke', bearer, '--tenant', 'root', '--site', site.id], env);
    expect(pasted.code).not.toBe(0);
    expect(pasted.stderr).toContain('looks like the token itself');
    expect((await t.cp.db.joinToken.findUniqueOrThrow({ where: { id: answer.id } })).revokedAt).toBeNull();
    expect(JSON.stringify(await t.cp.db.event.findMany())).not.toContain(bearer.split('.')[1]!);

    const revoke = await runCli(['site-tokens', 'revoke', answer.id, '--tenant', 'root', '--site', site.id, '--format', 'json'], env);
    expect(revoke.code).toBe(0);
    expect((JSON.parse(revoke.stdout) as SiteTokenView).revokedAt).not.toBeNull();
    expect(existsSync(out)).toBe(true);
  });

  it('runs sites create/list/get/update/delete', async () => {
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const created = await runCli(
      [
        'sites',
        'create',
        '--tenant',
        'root',
        '--kind',
        'shared',
        '--region',
        'eu-central-1',
        '--iam-region',
        'eu-central',
        '--key',
        'cli-site',
        '--format',
        'json',
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const s = JSON.parse(created.stdout) as SiteView;
    expect(s).toMatchObject({ kind: 'shared', region: 'eu-central-1', iamRegion: 'eu-central' });
    const list = await runCli(['sites', 'list', '--tenant', 'root'], env);
    expect(list.stdout).toMatch(/^ID\s+KIND\s+REGION/);
    expect(list.stdout).toContain(s.id);
    const updated = await runCli(['sites', 'update', s.id, '--clear-iam-region', '--version', '1', '--format', 'json'], env);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ iamRegion: null, version: 2 });
    const stale = await runCli(['sites', 'update', s.id, '--region', 'x1', '--version', '1'], env);
    expect(stale.stderr).toContain('CONFLICT');
    const deleted = await runCli(['sites', 'delete', s.id, '--format', 'json'], env);
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: true, tombstoned: false });
  });
});
