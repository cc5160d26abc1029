// The control plane counts a wipe or a DCGM report only when the node's own agent signed it.
// Real control plane, Temporal, database and site agent; the ramdisks join through the real
// discovery attestor (a site agent's assertion, a CSR, POST /v1/join), and their results come
// from the REAL ramdisk steps (disk.wipe on the emulated machine's disk file, diag.dcgm on its
// emulated GPUs). The outcome goes through the lifecycle's own activity (lifecycleApply):
// a signed result passes; a tampered one, another node's key, a result replayed into another
// run, a revoked certificate, the wrong agent's certificate and an unsigned `{ attested: true }`
// are each refused with the spec's code and a `security.attestation.refused` event, and the
// node fails, never ready.
// An emulated DCGM report counts only in a pool whose policy allows emulated machines.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDiscoveryAssertion } from '../../agent/boot/assertion';
import { Fleet } from '../../agent/emulator/fleet';
import type { Machine } from '../../agent/emulator/machine';
import type { RamdiskStepDeps } from '../../agent/ramdisk/steps/deps';
import { diskWipeStep } from '../../agent/ramdisk/steps/disk-wipe';
import { dcgmStep } from '../../agent/ramdisk/steps/machine';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { AgentLog } from '../../agent/common/log';
import type { SiteAgent } from '../../agent/site/main';
import { createRevokeIdentityActivities } from '../../activities/revoke-identity';
import { createNodeLifecycleActivities } from '../../activities/node-lifecycle';
import { attestResult } from '../../services/attestations/attestation';
import { discoveryTokenRef } from '../../services/boot/discovery-tokens';
import type { JsonObject, JsonValue, StepInput } from '../../core/plan';
import { buildCsr } from '../../services/pki/csr-builder';
import { activeAgent, enrollMachine, startBootSite, until, type BootSite } from '../helpers/boot-site';

let site: BootSite;
let holder: SiteAgent;
let fleet: Fleet;
let poolId: string;
let lifecycle: ReturnType<typeof createNodeLifecycleActivities>;

/** Waits in a run the discovery attestor accepts a ramdisk for (it admits only for running workflows about the node). */
const waitingProfile = { id: 'attest-wait', version: 1, target: 'metal', steps: [{ use: 'wait.agentJoined', with: { role: 'node' }, timeout: '10m' }] };

interface JoinedMachine {
  nodeId: string;
  machine: Machine;
  /** The run the node's state workflow is, for these outcomes. */
  workflowId: string;
  /** The real ramdisk steps' dependencies, with the key and certificate from the join. */
  deps: RamdiskStepDeps;
  serial: string;
}

async function startRun(nodeId: string): Promise<string> {
  return (
    await site.t.root.call<{ workflowId: string }>('POST', '/v1/profiles/attest-wait/runs', { tenantId: 'root', nodeId, provisionState: 'commissioning' })
  ).workflowId;
}

/** An emulated machine with two GPUs whose ramdisk joined as its node through the discovery attestor. */
async function joinedMachine(): Promise<JoinedMachine> {
  const { db, secrets } = site.t.cp;
  const added = await fleet.add({ diskBytes: 8 * 1024 * 1024, gpus: 2 });
  const nodeId = await enrollMachine(site, added.machine, added.bmc);
  await db.node.update({ where: { id: nodeId }, data: { poolId } });
  const workflowId = await startRun(nodeId);
  const mac = added.machine.description.macs[0] as string;
  const { ref } = await discoveryTokenRef(db, secrets, { tenantId: 'root', siteId: site.siteId, poolId, nodeId, workflowId, mac });
  const entry = {
    mac,
    productUuid: added.machine.description.uuid,
    arch: 'X86_64_EFI' as const,
    nodeId,
    workflowId,
    tokenRef: ref,
    notAfter: new Date(Date.now() + 7_200_000).toISOString(),
  };
  const assertion = signDiscoveryAssertion(
    { signer: holder.identity, siteId: site.siteId, agentNodeId: holder.identity.current.nodeId, epoch: holder.session.state().epoch },
    entry,
    { ip: null, productUuid: entry.productUuid },
  );
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const joined = await site.t.anonymous.request<{ nodeId: string; role: string; certificateChain: string[] }>('POST', '/v1/join', {
    token: await secrets.get(db, ref),
    csr: await buildCsr(privateKey, 'ramdisk'),
    discovery: { assertion, macs: [mac], productUuid: entry.productUuid },
  });
  expect(joined.status, JSON.stringify(joined.body)).toBe(201);
  expect(joined.body).toMatchObject({ nodeId, role: 'ramdisk' });
  const certificatePem = joined.body.certificateChain[0] as string;
  const row = await db.nodeCertificate.findFirstOrThrow({ where: { nodeId, role: 'ramdisk' } });
  const deps: RamdiskStepDeps = {
    nodeId,
    key: privateKey,
    certificatePem: () => certificatePem,
    hardware: added.machine.hardware(),
    client: new ControlPlaneClient(site.t.cp.url),
    log: new AgentLog(() => undefined),
    heartbeat: () => undefined,
  };
  return { nodeId, machine: added.machine, workflowId, deps, serial: row.serial };
}

const input = (m: JoinedMachine, use: string, stepKey: string, w: JsonObject, workflowId = m.workflowId): StepInput => ({
  workflowId,
  stepKey,
  use,
  with: w,
  target: { tenantId: 'root', nodeId: m.nodeId, siteId: site.siteId, provisionState: 'releasing', labels: {} },
});
/** The real ramdisk's disk.wipe (metal-release's steps[2]) and diag.dcgm (metal-commission's steps[2]). */
const wipe = async (m: JoinedMachine, stepKey = 'steps[2]', workflowId = m.workflowId, deps = m.deps) =>
  (await diskWipeStep(deps)(input(m, 'disk.wipe', stepKey, { mode: 'quick' }, workflowId))) as JsonObject;
const dcgm = async (m: JoinedMachine) => (await dcgmStep(m.deps)(input(m, 'diag.dcgm', 'steps[2]', { level: 2 }))) as JsonObject;

/** The node resting in a workflow-driven state with this run as its workflow, as a verb leaves it. */
async function inState(m: JoinedMachine, state: 'releasing' | 'commissioning', workflowId = m.workflowId): Promise<void> {
  await site.t.cp.db.node.update({
    where: { id: m.nodeId },
    data: {
      provisionState: state,
      provisionPhase: null,
      workflowId,
      failedFrom: null,
      lastError: undefined,
      maintenance: false,
      releaseWipe: state === 'releasing' ? 'quick' : null,
    },
  });
}

const refusals = async (nodeId: string) =>
  site.t.cp.db.event.findMany({ where: { subjectId: nodeId, type: 'security.attestation.refused' }, orderBy: { seq: 'asc' } });

/** lifecycleApply of a succeeded state workflow with these step outputs. */
async function apply(m: JoinedMachine, outputs: Record<string, JsonValue>, workflowId = m.workflowId) {
  return lifecycle.lifecycleApply({ nodeId: m.nodeId, workflowId, outcome: 'succeeded', outputs });
}

/**
 * The outcome is refused with `code`: the node failed (from `from`), never ready, and a new
 * refusal event names the reason, without the attestation's signature or certificate.
 */
async function refused(m: JoinedMachine, outputs: Record<string, JsonValue>, expected: { code: string; reason: string; from?: string; workflowId?: string }) {
  const before = (await refusals(m.nodeId)).length;
  const applied = await apply(m, outputs, expected.workflowId);
  expect(applied.state).toBe('failed');
  const row = await site.t.cp.db.node.findUniqueOrThrow({ where: { id: m.nodeId } });
  expect(row).toMatchObject({ provisionState: 'failed', failedFrom: expected.from ?? 'releasing', lastError: { code: expected.code } });
  const events = await until('the refusal event', async () => {
    const all = await refusals(m.nodeId);
    return all.length > before && all;
  });
  const event = events[events.length - 1] as (typeof events)[number];
  expect(event.data).toMatchObject({ code: expected.code, reason: expected.reason, workflowId: expected.workflowId ?? m.workflowId });
  const text = JSON.stringify(event.data);
  for (const output of Object.values(outputs)) {
    const attestation = (output as { attestation?: { signature?: string; certificate?: string } } | null)?.attestation;
    if (attestation?.signature) expect(text).not.toContain(attestation.signature);
    if (attestation?.certificate) expect(text).not.toContain(attestation.certificate.slice(0, 64));
  }
  return event;
}

beforeAll(async () => {
  site = await startBootSite('attestations-site');
  holder = await site.startAgent();
  await activeAgent(holder);
  fleet = await Fleet.start({ dataDir: `${site.t.config.dataDir}/fleet`, bootServerUrl: () => undefined });
  await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: waitingProfile });
  poolId = (await site.t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId: site.siteId, class: 'attest-metal' })).id;
  const { db, secrets, temporal } = site.t.cp;
  lifecycle = createNodeLifecycleActivities({ db, secrets, temporal, config: site.t.config, workerId: 'attestations-test' });
}, 90_000);

afterAll(async () => {
  await fleet?.close();
  await holder?.stop();
  await site?.t.close();
});

describe('attested wipe results', () => {
  let a: JoinedMachine;
  let b: JoinedMachine;

  beforeAll(async () => {
    a = await joinedMachine();
    b = await joinedMachine();
  }, 60_000);

  it('a wipe signed by the ramdisk of the node releases it to ready, with no refusal', async () => {
    await inState(a, 'releasing');
    const output = await wipe(a);
    expect(output).not.toHaveProperty('attested');
    expect(await apply(a, { 'steps[2]': output })).toEqual({ applied: true, state: 'ready' });
    expect(await refusals(a.nodeId)).toHaveLength(0);
  });

  it('an edited result, an unsigned { attested: true }, a missing result and a mangled attestation are refused with UNVERIFIED_WIPE', async () => {
    const good = await wipe(a);
    const disks = good.disks as Array<Record<string, JsonValue>>;
    const cases: Array<{ reason: string; outputs: Record<string, JsonValue> }> = [
      { reason: 'signature-invalid', outputs: { 'steps[2]': { ...good, disks: disks.map((d) => ({ ...d, bytes: Number(d.bytes) + 1 })) } } },
      { reason: 'signature-invalid', outputs: { 'steps[2]': { ...good, wipedAt: new Date(0).toISOString() } } },
      { reason: 'attestation-missing', outputs: { 'steps[2]': { mode: 'quick', attested: true, disks: [{ name: 'disk0', readBack: true }] } } },
      { reason: 'attestation-missing', outputs: {} },
      {
        reason: 'attestation-malformed',
        outputs: { 'steps[2]': { ...good, attestation: { v: 1, certificate: 'not base64!', issuedAt: 'yesterday', signature: '' } } },
      },
    ];
    for (const c of cases) {
      await inState(a, 'releasing');
      await refused(a, c.outputs, { code: 'UNVERIFIED_WIPE', reason: c.reason });
    }
  });

  it("another node's ramdisk signing for this node, this node's result replayed into another run or step, are refused", async () => {
    // B's real ramdisk key and certificate, claiming to be A.
    await inState(a, 'releasing');
    const forged = await wipe(a, 'steps[2]', a.workflowId, { ...b.deps, nodeId: a.nodeId });
    await refused(a, { 'steps[2]': forged }, { code: 'UNVERIFIED_WIPE', reason: 'certificate-other-node' });
    // A's genuine wipe of its first run, handed to the next run's release.
    const first = await wipe(a);
    const next = await startRun(a.nodeId);
    await inState(a, 'releasing', next);
    const replayed = await refused(a, { 'steps[2]': first }, { code: 'UNVERIFIED_WIPE', reason: 'signature-invalid', workflowId: next });
    expect(replayed.data).toMatchObject({ stepKey: 'steps[2]', use: 'disk.wipe' });
    // A's genuine wipe signed as another step of the same run is not this step's.
    await inState(a, 'releasing');
    await refused(a, { 'steps[2]': await wipe(a, 'steps[3]') }, { code: 'UNVERIFIED_WIPE', reason: 'signature-invalid' });
    // B's own wipe still counts for B.
    await inState(b, 'releasing');
    expect((await apply(b, { 'steps[2]': await wipe(b) })).state).toBe('ready');
  });

  it('a result dated before the run, or signed with a revoked certificate, is refused; one signed before the revocation still counts', async () => {
    await inState(b, 'releasing');
    const context = { use: 'disk.wipe', nodeId: b.nodeId, workflowId: b.workflowId, stepKey: 'steps[2]' };
    const stale = attestResult(
      b.deps.key,
      b.deps.certificatePem(),
      context,
      { mode: 'quick', disks: [{ name: 'disk0', readBack: true }] },
      new Date(Date.now() - 30 * 60_000),
    );
    await refused(b, { 'steps[2]': stale }, { code: 'UNVERIFIED_WIPE', reason: 'attestation-stale' });

    // Retiring's order: the wipe, then metal.revokeIdentity (the real step revokes every certificate of the node).
    const beforeRevocation = await wipe(b);
    await new Promise((r) => setTimeout(r, 20)); // the revocation is strictly after the signature
    const deps = { db: site.t.cp.db, secrets: site.t.cp.secrets, temporal: site.t.cp.temporal, config: site.t.config, workerId: 'attestations-test' };
    const revoked = await createRevokeIdentityActivities(deps)['metal.revokeIdentity'](input(b, 'metal.revokeIdentity', 'steps[4]', {}));
    expect(revoked.revokedCertificates).toBeGreaterThanOrEqual(1);
    expect((await site.t.cp.db.nodeCertificate.findUniqueOrThrow({ where: { serial: b.serial } })).revokedAt).not.toBeNull();
    await inState(b, 'releasing');
    expect((await apply(b, { 'steps[2]': beforeRevocation })).state).toBe('ready');

    await inState(b, 'releasing');
    const event = await refused(b, { 'steps[2]': await wipe(b) }, { code: 'UNVERIFIED_WIPE', reason: 'certificate-revoked' });
    expect(event.data).toMatchObject({ serial: b.serial });
  });
});

describe('attested DCGM reports', () => {
  let c: JoinedMachine;

  beforeAll(async () => {
    c = await joinedMachine();
  }, 60_000);

  it("the emulator's DCGM report says it is emulated and is refused in a pool that does not allow emulated machines", async () => {
    const report = await dcgm(c);
    expect(report).toMatchObject({ source: 'emulated', level: 2, passed: true });
    await inState(c, 'commissioning');
    const event = await refused(
      c,
      { 'steps[2]': report, 'steps[3]': await wipe(c, 'steps[3]') },
      { code: 'PERMISSION_DENIED', reason: 'emulated-machine', from: 'commissioning' },
    );
    expect(event.data).toMatchObject({ use: 'diag.dcgm', stepKey: 'steps[2]' });
    expect((await site.t.cp.db.node.findUniqueOrThrow({ where: { id: c.nodeId } })).lastError).toMatchObject({
      message: expect.stringMatching(/allowEmulatedMachines/),
    });
  });

  it("a DCGM run the node agent had to answer (a deploy's acceptance on node) is refused when the ramdisk's certificate signed it", async () => {
    const document = {
      id: 'attest-accept',
      version: 1,
      target: 'metal',
      steps: [{ use: 'metal.ensureRamdisk' }],
      acceptance: [{ use: 'diag.dcgm', on: 'node', with: { level: 1 } }],
    };
    await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document });
    await site.t.cp.db.node.update({
      where: { id: c.nodeId },
      data: { provisionState: 'deploying', workflowId: c.workflowId, deployProfile: { id: 'attest-accept', version: 1 }, failedFrom: null, maintenance: false },
    });
    const report = (await dcgmStep(c.deps)(input(c, 'diag.dcgm', 'acceptance[0]', { level: 1 }))) as JsonObject;
    await refused(c, { 'acceptance[0]': report }, { code: 'PERMISSION_DENIED', reason: 'certificate-role', from: 'deploying' });
  });

  it('an unsigned DCGM pass is refused with PERMISSION_DENIED even where emulated machines are allowed; a signed emulated report then commissions', async () => {
    const patched = await site.t.root.request('PATCH', `/v1/pools/${poolId}`, { tenantId: 'root', policy: { allowEmulatedMachines: true } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await inState(c, 'commissioning');
    const unsigned = { level: 2, tests: [{ name: 'memory', passed: true }], passed: true, source: 'dcgmi' };
    await refused(
      c,
      { 'steps[2]': unsigned, 'steps[3]': await wipe(c, 'steps[3]') },
      { code: 'PERMISSION_DENIED', reason: 'attestation-missing', from: 'commissioning' },
    );
    await inState(c, 'commissioning');
    expect(await apply(c, { 'steps[2]': await dcgm(c), 'steps[3]': await wipe(c, 'steps[3]') })).toEqual({ applied: true, state: 'ready' });
  });
});
