// The destructive-batch quorum at the API (docs/quorum.md): a tenant admin sets the policy
// (checked: Ed25519 keys of their own, M ≤ N); a tenant without one is asked nothing; a batch
// is approved only by M distinct approvers whose signatures verify on receipt, and every
// refusal (unknown approver, forged, duplicate, expired, a policy changed since) is an error
// and an event; the CLI signs on the approver's machine after recomputing what it shows;
// metal bulk asks for ONE batch covering its nodes and the verb's whole chain; another tenant
// sees none of it. Agents' refusals are in test/e2e/quorum.test.ts.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { ApiClient } from '../../cli/api-client';
import { newId } from '../../services/ids';
import { batchBundle, requestBatch } from '../../services/quorum/batch-store';
import { batchDigest, signBatch, signBatchRefusal } from '../../services/quorum/documents';
import { merkleProof, merkleProofValid } from '../../services/quorum/merkle';
import type { BatchViewAnswer } from '../../services/schemas/quorum';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { until } from '../helpers/provision';

type ErrorBody = { error: { code: string; message: string; details: Record<string, unknown> } };
type Event = { type: string; subjectId: string | null; data: Record<string, unknown> };

const keys = Object.fromEntries(['alice', 'bob', 'carol'].map((id) => [id, generateKeyPairSync('ed25519')]));
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
const approvers = Object.entries(keys).map(([id, k]) => ({ id, name: `Approver ${id}`, publicKeyPem: pem(k.publicKey) }));

let t: TestControlPlane;
let acme: ApiClient;
let siteId: string;
let poolId: string;
const nodeIds: string[] = [];

const events = async (type: string): Promise<Event[]> =>
  (await t.root.call<{ events: Event[] }>('GET', `/v1/events?tenantId=root&type=${type}&limit=500`)).events;
const show = (batchId: string) => t.root.call<BatchViewAnswer & { nodeIds: string[] }>('GET', `/v1/quorum/batches/${batchId}?tenantId=root`);
const approve = (batchId: string, approverId: string, signature: string) =>
  t.root.request<BatchViewAnswer & ErrorBody>('POST', `/v1/quorum/batches/${batchId}/approvals`, { tenantId: 'root', approverId, signature });
const signedBy = async (batchId: string, id: string) => signBatch(batchDigest((await show(batchId)).document), keys[id]?.privateKey as KeyObject);
const newBatch = (subject: string, ttlMs?: number) =>
  requestBatch(t.cp.db, {
    tenantId: 'root',
    kind: 'workflow',
    subject,
    reason: `deploying ${nodeIds[0]} (test)`,
    commands: ['deploy.image', 'power.setPower'],
    states: ['deploying'],
    nodeIds: [nodeIds[0] as string],
    ...(ttlMs ? { ttlMs } : {}),
  });

beforeAll(async () => {
  t = await startTestControlPlane();
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-quorum', idempotencyKey: 'quorum-site' }))
    .id;
  poolId = (await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'quorum' })).id;
  for (let i = 0; i < 5; i++) nodeIds.push(newId('node'));
  await t.cp.db.node.createMany({ data: nodeIds.map((id) => ({ id, tenantId: 'root', siteId, poolId, role: 'dedicated', provisionState: 'ready' })) });
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  acme = t.anonymous.withCredential(
    (
      await t.root.call<{ credential: string }>('POST', '/v1/credentials', {
        tenantId: 'acme',
        name: 'acme-admin',
        permissions: ['compute:nodes:read', 'compute:credentials:manage'],
      })
    ).credential,
  );
});

afterAll(async () => t?.close());

describe('the quorum policy', () => {
  it('is off by default: a tenant without one is asked for no batch', async () => {
    expect((await t.root.request<ErrorBody>('GET', '/v1/quorum/policy?tenantId=root')).status).toBe(404);
    expect(await newBatch('node:none:deploying:1')).toBeNull();
  });

  it('is refused unless every approver has an Ed25519 key of their own and M is at most N', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const cases = [
      { required: 2, approvers: [{ ...approvers[0], publicKeyPem: pem(rsa.publicKey) }, approvers[1]] },
      { required: 2, approvers: [approvers[0], { ...approvers[1], publicKeyPem: approvers[0]?.publicKeyPem }] },
      { required: 4, approvers },
    ];
    for (const body of cases) {
      const res = await t.root.request<ErrorBody>('PUT', '/v1/quorum/policy', { tenantId: 'root', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
    }
  });

  it('is set by a tenant admin with the sha256 site agents pin, as an event', async () => {
    const set = await t.root.call<{ sha256: string; version: number; required: number }>('PUT', '/v1/quorum/policy', {
      tenantId: 'root',
      required: 2,
      approvers,
    });
    expect(set).toMatchObject({ version: 1, required: 2 });
    expect(set.sha256).toMatch(/^[0-9a-f]{64}$/);
    const [event] = await until(
      () => events('quorum.policy.set'),
      (e) => e.length === 1,
    );
    expect(event?.data).toMatchObject({ sha256: set.sha256, required: 2, approvers: ['alice', 'bob', 'carol'] });
    // Another tenant's admin can neither read nor set it.
    expect((await acme.request<ErrorBody>('GET', '/v1/quorum/policy?tenantId=root')).status).toBe(403);
    expect((await acme.request<ErrorBody>('PUT', '/v1/quorum/policy', { tenantId: 'root', required: 1, approvers })).status).toBe(403);
  });
});

describe('approvals', () => {
  it('need M distinct approvers: M-1 leaves the batch pending; unknown, forged and duplicate signatures are refused as events', async () => {
    const batch = await newBatch('node:a:deploying:1');
    if (!batch) throw new Error('no batch');
    expect(batch.status).toBe('pending');
    expect((await show(batch.id)).reason).toContain('deploying');

    const mallory = generateKeyPairSync('ed25519');
    const unknown = await approve(batch.id, 'mallory', signBatch(batch.sha256, mallory.privateKey));
    expect([unknown.status, unknown.body.error.details.reason]).toEqual([403, 'quorum-signatures']);
    const forged = await approve(batch.id, 'bob', signBatch(batch.sha256, keys.alice?.privateKey as KeyObject)); // alice's key in bob's name
    expect([forged.status, forged.body.error.details.reason]).toEqual([403, 'quorum-signatures']);
    const otherDocument = await approve(batch.id, 'bob', signBatch('00'.repeat(32), keys.bob?.privateKey as KeyObject));
    expect(otherDocument.status).toBe(403);

    const first = await approve(batch.id, 'alice', await signedBy(batch.id, 'alice'));
    expect(first.body).toMatchObject({ status: 'pending', approvals: [{ approverId: 'alice' }], required: 2 }); // M-1
    const again = await approve(batch.id, 'alice', await signedBy(batch.id, 'alice'));
    expect([again.status, again.body.error.details.reason]).toEqual([409, 'quorum-duplicate']);
    const second = await approve(batch.id, 'carol', await signedBy(batch.id, 'carol'));
    expect(second.body).toMatchObject({ status: 'approved', approvals: [{ approverId: 'alice' }, { approverId: 'carol' }] });

    const refused = await until(
      () => events('quorum.approval.refused'),
      (e) => e.filter((x) => x.subjectId === batch.id).length === 4,
    );
    expect(refused.map((e) => e.data.reason)).toEqual(['quorum-signatures', 'quorum-signatures', 'quorum-signatures', 'quorum-duplicate']);
    await until(
      () => events('quorum.batch.approved'),
      (e) => e.some((x) => x.subjectId === batch.id && x.data.approvals === 2),
    );

    // The bundle sent to agents is checked here too: an approval row edited behind the API stops it.
    const row = await t.cp.db.quorumBatch.findUniqueOrThrow({ where: { id: batch.id } });
    expect((await batchBundle(t.cp.db, row, nodeIds[0] as string)).signatures).toHaveLength(2);
    await t.cp.db.quorumApproval.update({
      where: { batchId_approverId: { batchId: batch.id, approverId: 'carol' } },
      data: { signature: signBatch(batch.sha256, mallory.privateKey) },
    });
    await expect(batchBundle(t.cp.db, row, nodeIds[0] as string)).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { reason: 'quorum-signatures' },
    });
  });

  it("an approver's verified refusal ends a pending batch; an approval replayed as a refusal is not one", async () => {
    const batch = await newBatch('node:f:deploying:1');
    if (!batch) throw new Error('no batch');
    const refuse = (approverId: string, signature: string) =>
      t.root.request<BatchViewAnswer & ErrorBody>('POST', `/v1/quorum/batches/${batch.id}/refusals`, {
        tenantId: 'root',
        approverId,
        signature,
        reason: 'not during the freeze',
      });
    const replayed = await refuse('bob', await signedBy(batch.id, 'bob')); // bob's approval signature
    expect([replayed.status, replayed.body.error.details.reason]).toEqual([403, 'quorum-signatures']);
    expect((await show(batch.id)).status).toBe('pending');
    const refused = await refuse('bob', signBatchRefusal(batch.sha256, keys.bob?.privateKey as KeyObject));
    expect(refused.body.status).toBe('refused');
    const late = await approve(batch.id, 'alice', await signedBy(batch.id, 'alice'));
    expect([late.status, late.body.error.details.reason]).toEqual([409, 'quorum-refused']);
    const [event] = await until(
      () => events('quorum.batch.refused'),
      (e) => e.some((x) => x.subjectId === batch.id),
    );
    expect(event?.data).toMatchObject({ approverId: 'bob', reason: 'not during the freeze' });
    await until(
      () => events('quorum.refusal.refused'),
      (e) => e.some((x) => x.subjectId === batch.id),
    );
  });

  it('an expired batch is refused, and its expiry is an event', async () => {
    const batch = await newBatch('node:b:deploying:1', 50);
    if (!batch) throw new Error('no batch');
    await new Promise((r) => setTimeout(r, 100));
    const res = await approve(batch.id, 'alice', signBatch(batch.sha256, keys.alice?.privateKey as KeyObject));
    expect([res.status, res.body.error.details.reason]).toEqual([409, 'quorum-expired']);
    expect((await show(batch.id)).status).toBe('expired');
    await until(
      () => events('quorum.batch.expired'),
      (e) => e.some((x) => x.subjectId === batch.id),
    );
  });

  it('the CLI signs with the approver key on the approver machine, and refuses a key the policy does not list', async () => {
    const batch = await newBatch('node:c:deploying:1');
    if (!batch) throw new Error('no batch');
    const dir = mkdtempSync(path.join(inject('runDir'), 'quorum-cli-'));
    const keyFile = (id: string, key: KeyObject) => {
      const file = path.join(dir, `${id}.key`);
      writeFileSync(file, key.export({ type: 'pkcs8', format: 'pem' }).toString(), { mode: 0o600 });
      return file;
    };
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const wrong = await runCli(
      ['batches', 'approve', batch.id, '--approver', 'bob', '--key', keyFile('alice-as-bob', keys.alice?.privateKey as KeyObject)],
      env,
    );
    expect(wrong.code, wrong.stdout + wrong.stderr).not.toBe(0);
    expect(wrong.stderr).toContain('not the key the policy lists');
    const ok = await runCli(
      ['batches', 'approve', batch.id, '--approver', 'bob', '--key', keyFile('bob', keys.bob?.privateKey as KeyObject), '--format', 'json'],
      env,
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect((await show(batch.id)).approvals.map((a) => a.approverId)).toEqual(['bob']);
    const listed = await runCli(['batches', 'list', '--status', 'pending', '--format', 'json'], env);
    expect(listed.stdout).toContain(batch.id);
  });

  it('a batch asked for under a policy since changed cannot be approved', async () => {
    const batch = await newBatch('node:d:deploying:1');
    if (!batch) throw new Error('no batch');
    await t.root.call('PUT', '/v1/quorum/policy', { tenantId: 'root', required: 1, approvers });
    const res = await approve(batch.id, 'alice', await signedBy(batch.id, 'alice'));
    expect([res.status, res.body.error.details.reason]).toEqual([409, 'quorum-policy-changed']);
    await t.root.call('PUT', '/v1/quorum/policy', { tenantId: 'root', required: 2, approvers });
  });

  it("another tenant sees none of the tenant's batches", async () => {
    const batch = await newBatch('node:e:deploying:1');
    if (!batch) throw new Error('no batch');
    expect((await acme.request<ErrorBody>('GET', `/v1/quorum/batches/${batch.id}?tenantId=acme`)).status).toBe(404);
    expect(
      (await acme.request<ErrorBody>('POST', `/v1/quorum/batches/${batch.id}/approvals`, { tenantId: 'acme', approverId: 'alice', signature: 'AAAA' })).status,
    ).toBe(404);
    expect((await acme.call<{ batches: unknown[] }>('GET', '/v1/quorum/batches?tenantId=acme')).batches).toEqual([]);
  });
});

describe('metal bulk', () => {
  it('asks for ONE batch covering its nodes and the verb whole chain, with its reason; each node proves its place in it', async () => {
    const res = await t.root.call<{ bulkId: string }>('POST', '/v1/metal/bulk', {
      tenantId: 'root',
      poolId,
      verb: 'manage',
      nodeIds,
      reason: 'rack 9 re-verification after the PDU swap',
    });
    const row = await t.cp.db.quorumBatch.findFirstOrThrow({ where: { subject: res.bulkId } });
    const batch = await show(row.id);
    expect(batch).toMatchObject({ kind: 'bulk', status: 'pending', nodeCount: nodeIds.length, states: ['enrolling', 'inspecting', 'commissioning'] });
    expect(batch.commands).toEqual(expect.arrayContaining(['disk.wipe', 'management.setBootDevice', 'power.setPower']));
    expect(batch.reason).toContain('rack 9 re-verification after the PDU swap');
    for (const id of nodeIds) expect(merkleProofValid(batch.document.nodes.root, id, merkleProof(batch.nodeIds, id))).toBe(true);
    expect(merkleProofValid(batch.document.nodes.root, newId('node'), merkleProof(batch.nodeIds, nodeIds[0] as string))).toBe(false);
    const [requested] = await until(
      () => events('quorum.batch.requested'),
      (e) => e.some((x) => x.subjectId === row.id),
    );
    expect(requested).toBeDefined();
  });
});
