// Join and renewal through the real API: CSRs from the real openssl (EC P-256, Ed25519),
// certificates that openssl verifies against the node CA, the race for a token's last
// use, and every refusal with its code, reason and security event.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../../cli/api-client';
import type { JoinAnswer } from '../../core/schemas/join';
import type { SiteTokenView } from '../../core/schemas/site-tokens';
import type { SiteView } from '../../core/schemas/sites';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { csrForKey, newKeyAndCsr, openssl, workDir, writeFile } from '../helpers/openssl';

let t: TestControlPlane;
let site: SiteView;
let dir: string;

interface ApiError {
  error: { code: string; message: string; details: { reason?: string; path?: string } };
}
interface EventRow {
  type: string;
  subjectId: string | null;
  data: Record<string, unknown>;
}

async function mintToken(maxUses = 1, ttlSeconds = 3600): Promise<SiteTokenView & { token: string }> {
  return t.root.call('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds, maxUses }) as Promise<SiteTokenView & { token: string }>;
}

function join(token: string, csr: string): Promise<ApiResponse<JoinAnswer & ApiError>> {
  return t.anonymous.request('POST', '/v1/join', { token, csr });
}

async function events(type: string, tenantId = 'root'): Promise<EventRow[]> {
  return (await t.root.call<{ events: EventRow[] }>('GET', `/v1/events?tenantId=${tenantId}&type=${type}&limit=500`)).events;
}

beforeAll(async () => {
  t = await startTestControlPlane();
  dir = workDir();
  site = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'eu-central-1', idempotencyKey: 'join-site' });
});
afterAll(async () => t?.close());

describe('POST /v1/join', () => {
  for (const kind of ['ec', 'ed25519'] as const) {
    it(`issues a 24 h site certificate for an openssl ${kind} CSR that openssl verifies`, async () => {
      const token = await mintToken();
      const csr = newKeyAndCsr(dir, `agent-${kind}`, kind);
      const started = Date.now();
      const r = await join(token.token, csr);
      expect(r.status).toBe(201);
      const answer = r.body;
      expect(answer.role).toBe('site');
      expect(answer.siteId).toBe(site.id);
      expect(answer.nodeId).toMatch(/^node_[0-9a-z]{26}$/);
      expect(answer.temporal).toEqual({
        address: t.cp.gateway.address,
        serverName: t.cp.gateway.serverName,
        namespace: t.config.temporal.namespace,
        taskQueue: `site.${site.id}.${answer.nodeId}`,
      });
      const lifetime = Date.parse(answer.expiresAt) - started;
      expect(lifetime).toBeGreaterThan(24 * 3600_000 - 5_000);
      expect(lifetime).toBeLessThan(24 * 3600_000 + 5_000);

      const [leaf, ca] = answer.certificateChain as [string, string];
      writeFile(dir, `${kind}-leaf.pem`, leaf);
      writeFile(dir, 'ca.pem', ca);
      expect(openssl(['verify', '-CAfile', 'ca.pem', `${kind}-leaf.pem`], dir).trim()).toBe(`${kind}-leaf.pem: OK`);
      const text = openssl(['x509', '-noout', '-text', '-in', `${kind}-leaf.pem`], dir);
      expect(text).toContain(`URI:urn:ironflow:node:${answer.nodeId}:role:site:site:${site.id}`);
      expect(text).toMatch(new RegExp(`Subject: L ?= ?${site.id}, OU ?= ?site, CN ?= ?${answer.nodeId}`));
      expect(text).toContain(kind === 'ec' ? 'id-ecPublicKey' : 'ED25519');
      // The certificate holds the agent's own key: its public key matches the private key openssl made.
      const certKey = openssl(['x509', '-noout', '-pubkey', '-in', `${kind}-leaf.pem`], dir);
      const ownKey = openssl(['pkey', '-pubout', '-in', `agent-${kind}.key`], dir);
      expect(certKey).toBe(ownKey);

      const node = await t.cp.db.node.findUnique({ where: { id: answer.nodeId } });
      expect(node).toMatchObject({ role: 'site', siteId: site.id, poolId: null, tenantId: 'root' });
      expect(await t.cp.db.nodeCertificate.count({ where: { nodeId: answer.nodeId } })).toBe(1);
      expect((await t.cp.db.joinToken.findUnique({ where: { id: token.id } }))?.usesLeft).toBe(0);
    });
  }

  it('serves the same CA at /v1/join/ca and in the data dir', async () => {
    const ca = await t.anonymous.call<{ certificate: string }>('GET', '/v1/join/ca');
    expect(ca.certificate).toBe(readFileSync(path.join(dir, 'ca.pem'), 'utf8'));
    expect(readFileSync(path.join(t.config.dataDir, 'node-ca.pem'), 'utf8')).toBe(ca.certificate);
    const text = openssl(['x509', '-noout', '-text', '-in', 'ca.pem'], dir);
    expect(text).toContain('CA:TRUE');
    // The key is sealed in the secret store, never in the data dir.
    const sealed = await t.cp.db.secret.findMany({ where: { purpose: 'pki.node-ca' } });
    expect(sealed).toHaveLength(1);
    expect(Buffer.from(sealed[0]!.ciphertext).toString('utf8')).not.toContain('PRIVATE');
  });

  it('lets exactly one of several agents racing for the last use join', async () => {
    const token = await mintToken(1);
    const csrs = [0, 1, 2, 3, 4].map((i) => newKeyAndCsr(dir, `race-${i}`, i % 2 ? 'ec' : 'ed25519'));
    const answers = await Promise.all(csrs.map((csr) => join(token.token, csr)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 401, 401, 401, 401]);
    for (const a of answers.filter((x) => x.status === 401))
      expect(a.body.error).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'token-used-up' } });
    const nodes = await t.cp.db.node.findMany({ where: { id: { in: answers.filter((a) => a.status === 201).map((a) => a.body.nodeId) } } });
    expect(nodes).toHaveLength(1);
    expect((await t.cp.db.joinToken.findUnique({ where: { id: token.id } }))?.usesLeft).toBe(0);

    const two = await mintToken(2);
    const more = await Promise.all([0, 1, 2, 3].map((i) => join(two.token, csrs[i]!)));
    expect(more.filter((a) => a.status === 201)).toHaveLength(2);
    expect(more.filter((a) => a.status === 401)).toHaveLength(2);
  });

  it('refuses with the spec codes, records each refusal, and never logs the token', async () => {
    const csr = newKeyAndCsr(dir, 'refused', 'ec');
    const before = (await events('security.join.refused')).length;
    const cases: Array<{ token: string; csr?: string; status: number; code: string; reason?: string; path?: string }> = [];

    cases.push({ token: 'not-a-token', status: 401, code: 'UNAUTHENTICATED', reason: 'malformed-token' });
    const real = await mintToken(3);
    cases.push({ token: `${real.token.split('.')[0]}.wrongsecret`, status: 401, code: 'UNAUTHENTICATED', reason: 'unknown-token' });

    const revoked = await mintToken();
    await t.root.call('DELETE', `/v1/sites/${site.id}/tokens/${revoked.id}?tenantId=root`);
    cases.push({ token: revoked.token, status: 401, code: 'UNAUTHENTICATED', reason: 'token-revoked' });

    const expired = await mintToken();
    await t.cp.db.joinToken.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } }); // no waiting 60 s for the shortest TTL
    cases.push({ token: expired.token, status: 401, code: 'UNAUTHENTICATED', reason: 'token-expired' });

    cases.push({ token: real.token, csr: newKeyAndCsr(dir, 'rsa', 'rsa'), status: 400, code: 'INVALID_INPUT', path: 'csr' });
    const tampered = csr.replace(/(\n[A-Za-z0-9+/]{10})([A-Za-z0-9+/])/, (_m, a: string, c: string) => `${a}${c === 'A' ? 'B' : 'A'}`);
    cases.push({ token: real.token, csr: tampered, status: 400, code: 'INVALID_INPUT', path: 'csr' });
    cases.push({ token: real.token, csr: 'hello', status: 400, code: 'INVALID_INPUT', path: 'csr' });

    for (const c of cases) {
      const r = await join(c.token, c.csr ?? csr);
      expect(r.status, JSON.stringify(c)).toBe(c.status);
      expect(r.body.error.code).toBe(c.code);
      if (c.reason) expect(r.body.error.details.reason).toBe(c.reason);
      if (c.path) expect(r.body.error.details.path).toBe(c.path);
    }
    const shapeless = await t.anonymous.request<ApiError>('POST', '/v1/join', { token: 5, csr });
    expect(shapeless.status).toBe(400);
    expect(shapeless.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'token' } });
    // None of the refused requests consumed a use of the good token.
    expect((await t.cp.db.joinToken.findUnique({ where: { id: real.id } }))?.usesLeft).toBe(3);

    const recorded = (await events('security.join.refused')).slice(before);
    expect(recorded).toHaveLength(cases.length + 1); // and the shapeless body
    expect(recorded.map((e) => e.data.reason)).toEqual(
      expect.arrayContaining(['malformed-token', 'unknown-token', 'token-revoked', 'token-expired', 'invalid-input']),
    );
    const everything = JSON.stringify(await t.cp.db.event.findMany());
    for (const c of cases) if (c.token.includes('.')) expect(everything).not.toContain(c.token.split('.')[1]);
    expect(everything).not.toContain(real.token.split('.')[1]);
  });

  it('refuses tokens of a deleted site, and a site with a joined agent cannot be deleted', async () => {
    const other = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'r2', idempotencyKey: 'join-site-2' });
    const token = await t.root.call<{ id: string; token: string }>('POST', `/v1/sites/${other.id}/tokens`, { tenantId: 'root', ttlSeconds: 600, maxUses: 2 });
    const joined = await join(token.token, newKeyAndCsr(dir, 'site2', 'ec'));
    expect(joined.status).toBe(201);
    const refused = await t.root.request<ApiError>('DELETE', `/v1/sites/${other.id}?tenantId=root`);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_STATE', details: { nodes: 1 } });

    const third = await t.root.call<SiteView>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'r3', idempotencyKey: 'join-site-3' });
    const t3 = await t.root.call<{ id: string; token: string }>('POST', `/v1/sites/${third.id}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
    await t.root.call('DELETE', `/v1/sites/${third.id}?tenantId=root`);
    const late = await join(t3.token, newKeyAndCsr(dir, 'late', 'ec'));
    expect(late.status).toBe(401);
    expect(late.body.error.details.reason).toBe('token-revoked');
  });

  it('answers UNSUPPORTED for a token role no attestor handles yet', async () => {
    // A role no attestor is installed for (a row a future module might write) must not join as anything.
    const { mintBearer } = await import('../../services/bearer');
    const id = 'jt_0000000000000000000000rol3';
    const { bearer, secretHash } = mintBearer('ifjt', id);
    await t.cp.db.joinToken.create({
      data: { id, tenantId: 'root', siteId: site.id, role: 'future-role', secretHash, maxUses: 1, usesLeft: 1, expiresAt: new Date(Date.now() + 600_000) },
    });
    const r = await join(bearer, newKeyAndCsr(dir, 'future-role', 'ec'));
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'UNSUPPORTED', details: { reason: 'no-attestor' } });
    expect((await t.cp.db.joinToken.findUnique({ where: { id } }))?.usesLeft).toBe(1);
  });
});

describe('POST /v1/join/renew', () => {
  async function joined(name: string, kind: 'ec' | 'ed25519' = 'ec') {
    const token = await mintToken();
    const r = await join(token.token, newKeyAndCsr(dir, name, kind));
    expect(r.status).toBe(201);
    return r.body;
  }
  const renew = (certificate: string, csr: string) => t.anonymous.request<JoinAnswer & ApiError>('POST', '/v1/join/renew', { certificate, csr });

  it('renews with a CSR signed by the same key, without a token', async () => {
    for (const kind of ['ec', 'ed25519'] as const) {
      const first = await joined(`renew-${kind}`, kind);
      const r = await renew(first.certificateChain[0]!, csrForKey(dir, `renew-${kind}`, `renew-${kind}-2`));
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ nodeId: first.nodeId, role: 'site', siteId: site.id });
      expect(r.body.certificateChain[0]).not.toBe(first.certificateChain[0]);
      writeFile(dir, 'renewed.pem', r.body.certificateChain[0]!);
      writeFile(dir, 'ca.pem', r.body.certificateChain[1]!);
      expect(openssl(['verify', '-CAfile', 'ca.pem', 'renewed.pem'], dir).trim()).toBe('renewed.pem: OK');
      expect(await t.cp.db.nodeCertificate.count({ where: { nodeId: first.nodeId } })).toBe(2);
      // The renewed certificate renews in turn.
      expect((await renew(r.body.certificateChain[0]!, csrForKey(dir, `renew-${kind}`, `renew-${kind}-3`))).status).toBe(201);
    }
  });

  it('refuses another key, revoked, expired and foreign certificates (UNAUTHENTICATED) and records them', async () => {
    const agent = await joined('victim');
    const cert = agent.certificateChain[0]!;
    const before = (await events('security.agent.refused')).length;

    const otherKey = await renew(cert, newKeyAndCsr(dir, 'thief', 'ec'));
    expect(otherKey.body.error).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'key-mismatch' } });

    // A self-signed certificate for the same key, with our identity URI in it: not ours.
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-key',
        'victim.key',
        '-subj',
        '/CN=fake',
        '-days',
        '1',
        '-addext',
        `subjectAltName=URI:urn:ironflow:node:${agent.nodeId}:role:site:site:${site.id}`,
        '-out',
        'fake.pem',
      ],
      dir,
    );
    const foreign = await renew(readFileSync(path.join(dir, 'fake.pem'), 'utf8'), csrForKey(dir, 'victim', 'victim-2'));
    expect(foreign.body.error).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'unknown-issuer' } });

    // No API revokes or back-dates a certificate yet: change the record the check reads.
    const row = await t.cp.db.nodeCertificate.findFirstOrThrow({ where: { nodeId: agent.nodeId } });
    await t.cp.db.nodeCertificate.update({ where: { serial: row.serial }, data: { notAfter: new Date(Date.now() - 1000) } });
    const expired = await renew(cert, csrForKey(dir, 'victim', 'victim-3'));
    expect(expired.body.error).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'certificate-expired' } });

    await t.cp.db.nodeCertificate.update({ where: { serial: row.serial }, data: { notAfter: new Date(Date.now() + 3600_000), revokedAt: new Date() } });
    const revoked = await renew(cert, csrForKey(dir, 'victim', 'victim-4'));
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toMatchObject({ code: 'UNAUTHENTICATED', details: { reason: 'certificate-revoked' } });

    const recorded = (await events('security.agent.refused')).slice(before);
    expect(recorded.map((e) => e.data.reason)).toEqual(['key-mismatch', 'unknown-issuer', 'certificate-expired', 'certificate-revoked']);
    expect(recorded.every((e) => e.data.purpose === 'renew')).toBe(true);
    expect(await t.cp.db.nodeCertificate.count({ where: { nodeId: agent.nodeId } })).toBe(1);
  });
});

describe('docs/sites.md', () => {
  it("runs the agent's join and renew blocks as written (openssl, jq, curl)", async () => {
    const { execFile } = await import('node:child_process');
    const doc = readFileSync(path.join(t.config.root, 'docs', 'sites.md'), 'utf8');
    const block = (marker: string) => {
      const found = [...doc.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((b) => b.startsWith(`# agent: ${marker}`));
      expect(found, marker).toBeDefined();
      return found as string;
    };
    const agentDir = workDir();
    const token = await mintToken();
    writeFile(agentDir, 'site-token', `${token.token}\n`);
    const env = { ...process.env, IRONFLOW_API_URL: t.cp.url };
    // Asynchronous: the server answering curl runs in this process.
    const run = (script: string) =>
      new Promise<string>((resolve, reject) =>
        execFile('bash', ['-euo', 'pipefail', '-c', script], { cwd: agentDir, env, encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
    const joined = await run(block('join'));
    expect(joined).toContain('agent.pem: OK');
    expect(joined).toContain(`L = ${site.id}, OU = site, CN = node_`);
    expect(joined).toMatch(new RegExp(`site\\.${site.id}\\.node_[0-9a-z]{26}`));
    const first = readFileSync(path.join(agentDir, 'agent.pem'), 'utf8');
    expect(await run(block('renew'))).toContain('agent.pem: OK');
    expect(readFileSync(path.join(agentDir, 'agent.pem'), 'utf8')).not.toBe(first);
  });
});

describe('the node CA across processes', () => {
  it('is created once: a second control plane on the same database signs with the same CA and renews the first one’s certificates', async () => {
    const second = await startTestControlPlane({ config: t.config, worker: false });
    try {
      const first = await t.anonymous.call<{ certificate: string }>('GET', '/v1/join/ca');
      const other = await second.anonymous.call<{ certificate: string }>('GET', '/v1/join/ca');
      expect(other.certificate).toBe(first.certificate);
      const token = await mintToken();
      const joined = await join(token.token, newKeyAndCsr(dir, 'two-processes', 'ec'));
      expect(joined.status).toBe(201);
      const renewed = await second.anonymous.request<JoinAnswer>('POST', '/v1/join/renew', {
        certificate: joined.body.certificateChain[0],
        csr: csrForKey(dir, 'two-processes', 'two-processes-2'),
      });
      expect(renewed.status).toBe(201);
      expect(renewed.body.nodeId).toBe(joined.body.nodeId);
      expect(await t.cp.db.secret.count({ where: { purpose: 'pki.node-ca' } })).toBe(1);
    } finally {
      await second.close();
    }
  });
});
