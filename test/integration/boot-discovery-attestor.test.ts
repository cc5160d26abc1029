// The discovery attestor against a real control plane and a real site agent's key: an
// assertion signed by the lease-holding agent for the token's MAC and running workflow
// admits the ramdisk as the workflow's own node (role ramdisk); every other case is refused
// with its reason, consuming nothing. Approval mode `always` defers the join to an operator.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDiscoveryAssertion } from '../../agent/boot/assertion';
import { Fleet } from '../../agent/emulator/fleet';
import type { SiteAgent } from '../../agent/site/main';
import { decodeSignedAssertion, encodeSignedAssertion } from '../../services/boot/discovery-assertion';
import { discoveryTokenRef } from '../../services/boot/discovery-tokens';
import type { BootEntry } from '../../core/boot/boot-entry';
import { buildCsr } from '../../services/pki/csr-builder';
import { testConfig } from '../helpers/control-plane';
import { activeAgent, enrollMachine, startBootSite, type BootSite } from '../helpers/boot-site';

interface Machine {
  nodeId: string;
  mac: string;
  uuid: string;
  workflowId: string;
}

async function setUp(site: BootSite, fleet: Fleet, profileId: string): Promise<Machine> {
  const added = await fleet.add();
  const nodeId = await enrollMachine(site, added.machine, added.bmc);
  const started = await site.t.root.call<{ workflowId: string }>('POST', `/v1/profiles/${profileId}/runs`, {
    tenantId: 'root',
    nodeId,
    provisionState: 'commissioning',
  });
  return { nodeId, mac: added.machine.description.macs[0] as string, uuid: added.machine.description.uuid, workflowId: started.workflowId };
}

async function tokenFor(site: BootSite, m: Machine): Promise<{ bearer: string; entry: BootEntry }> {
  const { db, secrets } = site.t.cp;
  const { ref } = await discoveryTokenRef(db, secrets, {
    tenantId: 'root',
    siteId: site.siteId,
    poolId: null,
    nodeId: m.nodeId,
    workflowId: m.workflowId,
    mac: m.mac,
  });
  const entry: BootEntry = {
    mac: m.mac,
    productUuid: m.uuid,
    arch: 'X86_64_EFI',
    nodeId: m.nodeId,
    workflowId: m.workflowId,
    tokenRef: ref,
    notAfter: new Date(Date.now() + 7_200_000).toISOString(),
  };
  return { bearer: await secrets.get(db, ref), entry };
}

function assertionBy(agent: SiteAgent, site: BootSite, entry: BootEntry, overrides: { epoch?: number; now?: Date; mac?: string } = {}): string {
  const state = agent.session.state();
  return signDiscoveryAssertion(
    { signer: agent.identity, siteId: site.siteId, agentNodeId: agent.identity.current.nodeId, epoch: overrides.epoch ?? state.epoch },
    overrides.mac ? { ...entry, mac: overrides.mac } : entry,
    { ip: '10.0.0.5', productUuid: entry.productUuid },
    overrides.now,
  );
}

async function join(site: BootSite, body: { token: string; assertion: string; macs: string[]; productUuid?: string }) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const csr = await buildCsr(privateKey, 'ramdisk');
  const answer = await site.t.anonymous.request('POST', '/v1/join', {
    token: body.token,
    csr,
    discovery: { assertion: body.assertion, macs: body.macs, ...(body.productUuid ? { productUuid: body.productUuid } : {}) },
  });
  const error = (answer.body as { error?: { code: string; details: { reason?: string; joinRequestId?: string } } }).error;
  return {
    status: answer.status,
    body: answer.body as { nodeId?: string; role?: string },
    code: error?.code,
    reason: error?.details.reason,
    joinRequestId: error?.details.joinRequestId,
  };
}

const waitingProfile = { id: 'attestor-wait', version: 1, target: 'metal', steps: [{ use: 'wait.agentJoined', with: { role: 'node' }, timeout: '10m' }] };

describe('discovery attestor', () => {
  let site: BootSite;
  let holder: SiteAgent;
  let standby: SiteAgent;
  let fleet: Fleet;

  beforeAll(async () => {
    site = await startBootSite('attestor-site');
    holder = await site.startAgent();
    await activeAgent(holder);
    standby = await site.startAgent();
    fleet = await Fleet.start({ dataDir: `${site.t.config.dataDir}/fleet`, bootServerUrl: () => undefined });
    await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: waitingProfile });
  }, 90_000);

  afterAll(async () => {
    await fleet?.close();
    await standby?.stop();
    await holder?.stop();
    await site?.t.close();
  });

  it('refuses every case the spec names, then admits the good one as the same node, once', async () => {
    const m = await setUp(site, fleet, 'attestor-wait');
    const { bearer, entry } = await tokenFor(site, m);
    const good = assertionBy(holder, site, entry);
    const refused = async (body: Parameters<typeof join>[1]) => {
      const answer = await join(site, body);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      return answer.reason;
    };
    expect(
      await refused({ token: bearer, assertion: assertionBy(holder, site, entry, { mac: '02:aa:aa:aa:aa:aa' }), macs: [m.mac, '02:aa:aa:aa:aa:aa'] }),
    ).toBe('mac-mismatch');
    expect(await refused({ token: bearer, assertion: good, macs: ['02:bb:bb:bb:bb:bb'], productUuid: m.uuid })).toBe('mac-not-claimed');
    expect(await refused({ token: bearer, assertion: good, macs: [m.mac], productUuid: '00000000-1111-2222-3333-444444444444' })).toBe('product-uuid-mismatch');
    // Tampered: the payload changed (another IP), the signature kept.
    const decoded = decodeSignedAssertion(good);
    const [, cert, sig] = good.split('.');
    const tamperedPayload = Buffer.from(JSON.stringify({ ...decoded.assertion, ip: '10.9.9.9' })).toString('base64url');
    expect(await refused({ token: bearer, assertion: `${tamperedPayload}.${cert}.${sig}`, macs: [m.mac], productUuid: m.uuid })).toBe('assertion-signature');
    // Signed with a key that is not the certificate's.
    const { privateKey: stranger } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = encodeSignedAssertion(stranger, holder.identity.certificatePem(), decoded.assertion);
    expect(await refused({ token: bearer, assertion: forged, macs: [m.mac], productUuid: m.uuid })).toBe('assertion-signature');
    // A site agent that does not hold the lease, and a stale epoch of the holder.
    expect(
      await refused({
        token: bearer,
        assertion: assertionBy(standby, site, entry, { epoch: holder.session.state().epoch }),
        macs: [m.mac],
        productUuid: m.uuid,
      }),
    ).toBe('agent-not-lease-holder');
    expect(
      await refused({
        token: bearer,
        assertion: assertionBy(holder, site, entry, { epoch: holder.session.state().epoch + 1 }),
        macs: [m.mac],
        productUuid: m.uuid,
      }),
    ).toBe('stale-epoch');
    // Older than 15 minutes.
    expect(
      await refused({
        token: bearer,
        assertion: assertionBy(holder, site, entry, { now: new Date(Date.now() - 16 * 60_000) }),
        macs: [m.mac],
        productUuid: m.uuid,
      }),
    ).toBe('assertion-expired');
    // Past its notAfter (its boot entry lapsed a minute ago), though only 2 minutes old.
    const lapsed = { ...entry, notAfter: new Date(Date.now() - 60_000).toISOString() };
    expect(
      await refused({
        token: bearer,
        assertion: assertionBy(holder, site, lapsed, { now: new Date(Date.now() - 2 * 60_000) }),
        macs: [m.mac],
        productUuid: m.uuid,
      }),
    ).toBe('assertion-expired');
    // Nothing was consumed by the refusals.
    expect((await site.t.cp.db.joinToken.findFirst({ where: { nodeId: m.nodeId, role: 'discovery' } }))?.usesLeft).toBe(1);

    const admitted = await join(site, { token: bearer, assertion: good, macs: [m.mac], productUuid: m.uuid });
    expect(admitted.status).toBe(201);
    expect(admitted.body).toMatchObject({ nodeId: m.nodeId, role: 'ramdisk' });
    // The token is spent, and the assertion cannot be used again even with a fresh token.
    expect((await join(site, { token: bearer, assertion: good, macs: [m.mac], productUuid: m.uuid })).reason).toBe('assertion-used');
    const again = await tokenFor(site, m);
    expect(again.bearer).not.toBe(bearer);
    expect((await join(site, { token: again.bearer, assertion: good, macs: [m.mac], productUuid: m.uuid })).reason).toBe('assertion-used');
  }, 60_000);

  it('refuses a workflow that no longer runs', async () => {
    const m = await setUp(site, fleet, 'attestor-wait');
    const { bearer, entry } = await tokenFor(site, m);
    await site.t.cp.temporal.workflow.getHandle(m.workflowId).terminate('test');
    expect((await join(site, { token: bearer, assertion: assertionBy(holder, site, entry), macs: [m.mac], productUuid: m.uuid })).reason).toBe(
      'workflow-not-running',
    );
  }, 30_000);

  it('the assertion never outlives its boot entry and lasts at most 15 minutes', () => {
    const entry: BootEntry = {
      mac: '02:00:00:00:00:01',
      productUuid: null,
      arch: 'BIOS',
      nodeId: 'node_x',
      workflowId: 'w',
      tokenRef: 'sec_x',
      notAfter: new Date(Date.now() + 60_000).toISOString(),
    };
    const short = decodeSignedAssertion(assertionBy(holder, site, entry)).assertion;
    expect(Date.parse(short.notAfter)).toBe(Date.parse(entry.notAfter));
    const long = decodeSignedAssertion(assertionBy(holder, site, { ...entry, notAfter: new Date(Date.now() + 7_200_000).toISOString() })).assertion;
    expect(Date.parse(long.notAfter) - Date.parse(long.issuedAt)).toBe(15 * 60_000);
  });
});

describe('discovery approval: always', () => {
  let site: BootSite;
  let holder: SiteAgent;
  let fleet: Fleet;

  beforeAll(async () => {
    site = await startBootSite('attestor-approval-site', { config: await testConfig({ IRONFLOW_DISCOVERY_APPROVAL: 'always' }) });
    holder = await site.startAgent();
    await activeAgent(holder);
    fleet = await Fleet.start({ dataDir: `${site.t.config.dataDir}/fleet`, bootServerUrl: () => undefined });
    await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: waitingProfile });
  }, 90_000);

  afterAll(async () => {
    await fleet?.close();
    await holder?.stop();
    await site?.t.close();
  });

  it('defers the join to a join request; a rejection refuses it, an approval admits it once', async () => {
    const m = await setUp(site, fleet, 'attestor-wait');
    const { bearer, entry } = await tokenFor(site, m);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const csr = await buildCsr(privateKey, 'ramdisk');
    const body = { token: bearer, csr, discovery: { assertion: assertionBy(holder, site, entry), macs: [m.mac], productUuid: m.uuid } };
    const first = await site.t.anonymous.request('POST', '/v1/join', body);
    const details = (first.body as { error: { details: { reason: string; joinRequestId: string } } }).error.details;
    expect(details.reason).toBe('approval-pending');
    const list = await site.t.root.call<{ joinRequests: Array<{ id: string; status: string; nodeId: string }> }>(
      'GET',
      `/v1/join-requests?tenantId=root&siteId=${site.siteId}&status=open`,
    );
    expect(list.joinRequests).toEqual([expect.objectContaining({ id: details.joinRequestId, status: 'open', nodeId: m.nodeId })]);
    // Still pending on retry; then approved: the same CSR joins, once.
    expect(((await site.t.anonymous.request('POST', '/v1/join', body)).body as { error: { details: { reason: string } } }).error.details.reason).toBe(
      'approval-pending',
    );
    await site.t.root.call('POST', `/v1/join-requests/${details.joinRequestId}/approve`, { tenantId: 'root' });
    const admitted = await site.t.anonymous.request('POST', '/v1/join', body);
    expect(admitted.status).toBe(201);
    expect(admitted.body).toMatchObject({ nodeId: m.nodeId, role: 'ramdisk' });
    // A decided request cannot be decided again.
    expect((await site.t.root.request('POST', `/v1/join-requests/${details.joinRequestId}/reject`, { tenantId: 'root' })).status).toBe(409);

    // Another machine: rejected.
    const other = await setUp(site, fleet, 'attestor-wait');
    const t2 = await tokenFor(site, other);
    const body2 = { token: t2.bearer, csr, discovery: { assertion: assertionBy(holder, site, t2.entry), macs: [other.mac], productUuid: other.uuid } };
    const pending = (await site.t.anonymous.request('POST', '/v1/join', body2)).body as { error: { details: { joinRequestId: string } } };
    await site.t.root.call('POST', `/v1/join-requests/${pending.error.details.joinRequestId}/reject`, { tenantId: 'root' });
    const rejected = await site.t.anonymous.request('POST', '/v1/join', body2);
    expect(rejected.status).toBe(403);
  }, 60_000);
});
