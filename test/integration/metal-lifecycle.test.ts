// The metal lifecycle through the real API, database and Temporal dev server. The machine
// side is emulated hardware: activity-only workers on the site agent's queue (BMC, boot
// entries) and on each machine's ramdisk queue (inventory, DCGM, wipe, image write). Our
// own code (the lifecycle, the provision workflow, the control steps) runs for real. The
// DCGM and wipe answers are attested as the real ramdisk attests them, with a ramdisk
// certificate the node CA issued to the machine, so the lifecycle's verification runs too.
import type { InspectOobOutput, InventoryOutput } from '../../core/schemas/inventory';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attestStepResult } from '../../agent/common/attest';
import { dcgmStepResult } from '../../agent/common/dcgm';
import type { Signer } from '../../agent/common/control-plane-client';
import { siteAgentQueue } from '../../core/agent-queues';
import { recordCertificate } from '../../core/joins/record-certificate';
import { loadOrCreateNodeCa } from '../../services/pki/node-ca';
import { addImageSigner } from '../../services/images/signers';
import { imageSigningInput } from '../../core/images/signing-input';
import type { StepInput } from '../../core/plan';
import type { MetalBulkPage, MetalBulkRunView, MetalNodeView } from '../../core/schemas/metal';
import { agentJoinedSignal } from '../../workflows/provision-handles';
import { HISTORY_LIMIT } from '../../workflows/node-lifecycle';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { siteCommandsRun } from '../helpers/history-activities';
import { failedWorkflowTasks, historyOnceEnded } from '../helpers/ended-history';
import { emulatedRamdiskQueue, keepSessions, Ledger, startEmulatedAgent, until, type EmulatedAgent, type MachineActivity } from '../helpers/provision';

type ErrorBody = { error: { code: string; message: string } };

let t: TestControlPlane;
let ledger: Ledger;
let siteId: string;
let poolId: string;
const AGENT = 'node_metal_site_agent';
const agents: EmulatedAgent[] = [];
const sessions: Array<{ stop(): Promise<void> }> = [];

/** The emulated machines, by node id: identity and how their hardware behaves. */
interface Machine {
  productUuid: string;
  macs: string[];
  /** Whether the wipe's disks read back as wiped (the attested result says so either way). */
  wipeAttested: boolean;
  /** A step (use) that hangs until it is cancelled or this is cleared. */
  hang?: string;
  disk?: string;
}
const machines = new Map<string, Machine>();
let nextMachine = 0;

function hardware(use: string, answer: (m: Machine, input: StepInput) => unknown | Promise<unknown>): MachineActivity {
  return async (input) => {
    const m = machines.get(input.target.nodeId);
    ledger.append({ step: `${input.target.nodeId}/${input.stepKey}`, use, event: 'start', queue: Context.current().info.taskQueue, data: input.with });
    if (!m) throw new Error(`no emulated machine ${input.target.nodeId}`);
    while (m.hang === use) {
      Context.current().heartbeat();
      await Context.current().sleep(200); // throws when cancelled
    }
    const result = await answer(m, input);
    ledger.append({ step: `${input.target.nodeId}/${input.stepKey}`, use, event: 'done' });
    return result;
  };
}

const siteSteps = {
  'inspect.oob': hardware('inspect.oob', (m): InspectOobOutput => ({
    driver: 'redfish',
    power: 'off',
    macs: m.macs.map((x) => x.toUpperCase()),
    productUuid: m.productUuid,
    arch: 'x86_64',
    ips: [],
  })),
  // metal.ensureRamdisk (workflow code) sends these to the site agent it picked. This agent is
  // one release older than boot.pxeBoot (the real agent's boot in one command): the run sends
  // it the boot's commands one by one instead.
  'boot.prepareRamdisk': hardware('boot.prepareRamdisk', (_m, i) => ({ macs: (i.with.entries as Array<{ mac: string }>).map((e) => e.mac) })),
  'boot.cleanUp': hardware('boot.cleanUp', () => ({ removed: 1 })),
  'power.setPower': hardware('power.setPower', async (_m, i) => {
    // A power-on after boot.prepareRamdisk PXE-boots the ramdisk, which joins: its session, and the join path's agentJoined.
    if (
      i.with.action === 'on' &&
      ledger.entries().some((e) => e.step.startsWith(`${i.target.nodeId}/`) && e.use === 'boot.prepareRamdisk' && e.event === 'done')
    )
      await ramdiskJoined(i.target.nodeId, i.workflowId);
    return { power: i.with.action };
  }),
  'management.setBootDevice': hardware('management.setBootDevice', () => ({ ok: true })),
  'media.eject': hardware('media.eject', () => ({ ok: true })),
};
const ramdiskSteps = {
  'inventory.refresh': hardware('inventory.refresh', (m): InventoryOutput => ({
    sections: {
      system: { productUuid: m.productUuid, vendor: 'emulated', model: 'test', serial: 'unknown', arch: 'x86_64', uefi: false, cpus: 2, memoryBytes: 1 << 30 },
      nics: m.macs.map((mac) => ({ mac, ip: null })),
      disks: [{ name: 'sda', sizeBytes: 1 << 30 }],
      gpus: [],
    },
    collectedAt: new Date().toISOString(),
  })),
  // The real ramdisk's DCGM step on a machine without GPUs, and a wipe result in the real shape, both attested.
  'diag.dcgm': hardware('diag.dcgm', async (_m, i) => dcgmStepResult(await ramdiskSigner(i.target.nodeId), i.target.nodeId, i, { gpus: [] })),
  'disk.wipe': hardware('disk.wipe', async (m, i) => {
    const mode = String(i.with.mode ?? 'quick');
    const disks = [{ name: 'sda', mode, method: 'emulated', bytes: 1 << 30, readBack: m.wipeAttested }];
    return attestStepResult(await ramdiskSigner(i.target.nodeId), i.target.nodeId, i, {
      nodeId: i.target.nodeId,
      workflowId: i.workflowId,
      mode,
      disks,
      wipedAt: new Date().toISOString(),
    });
  }),
  'deploy.image': hardware('deploy.image', (m, i) => {
    m.disk = String(i.with.source);
    return { sha256: i.with.sha256, bytesWritten: i.with.sizeBytes };
  }),
};

/** The key and ramdisk certificate the node CA issues a machine's ramdisk when it joins (services/attestors/discovery-attestor.ts). */
const ramdiskSigners = new Map<string, Promise<Signer>>();
function ramdiskSigner(nodeId: string): Promise<Signer> {
  let signer = ramdiskSigners.get(nodeId);
  if (!signer) {
    signer = (async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const ca = await loadOrCreateNodeCa(t.cp.db, t.cp.secrets);
      const issued = await t.cp.db.$transaction((tx) =>
        recordCertificate(tx, ca, publicKey.export({ type: 'spki', format: 'der' }), { nodeId, role: 'ramdisk', siteId }, 7200, new Date()),
      );
      return { key: privateKey, certificatePem: () => issued.pem };
    })();
    ramdiskSigners.set(nodeId, signer);
  }
  return signer;
}

/**
 * The emulated ramdisk joins: the workflow whose discovery token it used hears agentJoined (as
 * the join path signals it; ensureRamdisk waits for it), and its session is kept fresh as its
 * heartbeats would.
 */
const joinedRamdisks = new Set<string>();
async function ramdiskJoined(nodeId: string, workflowId: string): Promise<void> {
  const taskQueue = emulatedRamdiskQueue(nodeId);
  await t.cp.temporal.workflow.getHandle(workflowId).signal(agentJoinedSignal, { role: 'ramdisk', agentNodeId: nodeId, taskQueue });
  if (joinedRamdisks.has(nodeId)) return;
  joinedRamdisks.add(nodeId);
  sessions.push(keepSessions(t.cp.db, [{ nodeId, siteId, role: 'ramdisk', taskQueue }]));
}

function newMachine(overrides: Partial<Machine> = {}): Machine {
  nextMachine += 1;
  const n = nextMachine.toString(16).padStart(2, '0');
  return { productUuid: `4c4c4544-0000-1000-8000-0000000000${n}`, macs: [`b8:ce:f6:00:00:${n}`], wipeAttested: true, ...overrides };
}

async function enroll(machine: Machine, extra: Record<string, unknown> = {}): Promise<MetalNodeView> {
  const res = await t.root.request<MetalNodeView>('POST', '/v1/metal/nodes', {
    tenantId: 'root',
    poolId,
    bmc: { driver: 'redfish', address: `https://10.0.0.${nextMachine}`, username: 'admin', password: 'bmc-password-do-not-leak' },
    ...extra,
  });
  expect(res.status).toBe(201);
  machines.set(res.body.nodeId, machine);
  agents.push(await startEmulatedAgent(t.config, emulatedRamdiskQueue(res.body.nodeId), ramdiskSteps));
  return res.body;
}

const get = (nodeId: string) => t.root.call<MetalNodeView>('GET', `/v1/metal/nodes/${nodeId}?tenantId=root`);
const verb = (nodeId: string, name: string, body: Record<string, unknown> = {}) =>
  t.root.request<MetalNodeView & ErrorBody>('POST', `/v1/metal/nodes/${nodeId}/${name}`, { tenantId: 'root', ...body });
const settle = (nodeId: string, state: string, ms = 30_000) =>
  until(
    () => get(nodeId),
    (n) => n.provisionState === state && n.workflowId === null,
    ms,
    `${nodeId} to rest in ${state}`,
  );
const events = async (nodeId: string) => (await t.cp.db.event.findMany({ where: { subjectId: nodeId }, orderBy: { seq: 'asc' } })).map((e) => e.type);
const started = (nodeId: string, use: string) => ledger.entries().filter((e) => e.step.startsWith(`${nodeId}/`) && e.use === use && e.event === 'start');

async function readyNode(overrides: Partial<Machine> = {}): Promise<MetalNodeView> {
  const node = await enroll(newMachine(overrides));
  return settle(node.nodeId, 'ready');
}

const signer = generateKeyPairSync('ed25519');
async function registerImage(ref: string, signed: boolean): Promise<{ sha256: string; source: string }> {
  const input = {
    tenantId: 'root',
    ref,
    kind: 'os',
    format: 'raw',
    compression: 'zstd',
    sha256: createHash('sha256').update(ref).digest('hex'),
    sizeBytes: 4096,
    source: `https://images.example.com/${ref}.raw.zst`,
  };
  const signature = signed ? { signerId: 'metal-test', signature: sign(null, imageSigningInput(input), signer.privateKey).toString('base64') } : {};
  await t.root.call('POST', '/v1/images', { ...input, ...signature });
  return input;
}
async function deployProfile(id: string, imageRef: string): Promise<void> {
  await t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id,
      version: 1,
      target: 'metal',
      role: 'dedicated',
      image: { ref: imageRef, format: 'raw', compression: 'zstd' },
      steps: [
        { use: 'metal.ensureRamdisk' },
        { use: 'deploy.deploy', timeout: '1m' },
        { use: 'management.setBootDevice', on: 'site', with: { device: 'disk' } },
      ],
      cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
    },
  });
}

beforeAll(async () => {
  t = await startTestControlPlane();
  ledger = new Ledger(path.join(t.config.dataDir, 'machines.jsonl'));
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-metal', idempotencyKey: 'metal-site' })).id;
  poolId = (
    await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'metal-host', policy: { hardwareProfile: 'gpu-redfish' } })
  ).id;
  agents.push(await startEmulatedAgent(t.config, siteAgentQueue(siteId, AGENT), siteSteps));
  sessions.push(keepSessions(t.cp.db, [{ nodeId: AGENT, siteId, role: 'site', taskQueue: siteAgentQueue(siteId, AGENT) }]));
  await addImageSigner(t.cp.db, { tenantId: 'root', id: 'metal-test', publicKeyPem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
});

afterAll(async () => {
  for (const s of sessions) await s.stop();
  await Promise.all(agents.map((a) => a.stop()));
  await t?.close();
});

describe('metal lifecycle', () => {
  it('enroll starts the lifecycle, which chains enrolling → inspecting → commissioning → ready with no caller', async () => {
    const machine = newMachine();
    const enrolled = await enroll(machine, { macs: [machine.macs[0]?.toUpperCase()], drivers: { boot: 'uefi-http' } });
    expect(enrolled).toMatchObject({
      provisionState: 'enrolling',
      bmc: { driver: 'redfish', credentialsSet: true },
      macs: machine.macs,
      hardwareProfile: 'gpu-redfish',
    });
    expect(enrolled.driverBindings).toMatchObject({ power: { driver: 'redfish' }, deploy: { driver: 'image-stream' }, boot: { driver: 'uefi-http' } });
    expect(JSON.stringify(enrolled)).not.toContain('bmc-password-do-not-leak');
    // The credentials are sealed in the secret store as JSON, referenced by the node.
    const row = await t.cp.db.node.findUniqueOrThrow({ where: { id: enrolled.nodeId } });
    expect(JSON.parse(await t.cp.secrets.get(t.cp.db, row.bmcCredentialsRef as string))).toEqual({ username: 'admin', password: 'bmc-password-do-not-leak' });

    const ready = await settle(enrolled.nodeId, 'ready');
    expect(ready).toMatchObject({ productUuid: machine.productUuid, power: 'off', maintenance: false });
    const types = await events(enrolled.nodeId);
    expect(types.filter((e) => e.startsWith('node.provision.') && e !== 'node.provision.workflow')).toEqual([
      'node.provision.enrolling',
      'node.provision.inspecting',
      'node.provision.commissioning',
      'node.provision.ready',
    ]);
    expect(types[0]).toBe('node.enrolled');
    expect(types.filter((e) => e === 'node.provision.workflow')).toHaveLength(3);
    // The lifecycle ended at rest without a failed workflow task: it waited for commissioning's
    // close, which Temporal would otherwise hold against its end (UnhandledCommand, a replay).
    const lifecycleHistory = await historyOnceEnded(t.cp.temporal.workflow.getHandle(`node:${enrolled.nodeId}`));
    expect(failedWorkflowTasks(lifecycleHistory)).toEqual([]);
    // It heard each state run's end from the run's close: none signalled it (patch state-end-on-request).
    expect(lifecycleHistory.events?.flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? [])).not.toContain('stateWorkflowEnded');
    expect(lifecycleHistory.events?.filter((e) => e.childWorkflowExecutionCompletedEventAttributes)).toHaveLength(3);
    // Each state ran its shipped profile as a child with the ids and search attributes of the design.
    const children = [];
    for await (const w of t.cp.temporal.workflow.list({ query: `NodeId = "${enrolled.nodeId}"` })) children.push(`${w.workflowId} ${w.type}`);
    expect(children.sort()).toEqual(
      [
        `node:${enrolled.nodeId} nodeLifecycle`,
        `node:${enrolled.nodeId}:commissioning:3 provision`,
        `node:${enrolled.nodeId}:enrolling:1 provision`,
        `node:${enrolled.nodeId}:inspecting:2 provision`,
      ].sort(),
    );
    // inventory.refresh was given the enrolled identity to check; commissioning wiped and powered off.
    expect(started(enrolled.nodeId, 'inventory.refresh')[0]?.data).toEqual({ expect: { productUuid: machine.productUuid, macs: machine.macs } });
    expect(started(enrolled.nodeId, 'disk.wipe').map((e) => (e.data as { mode: string }).mode)).toEqual(['quick']);
    // The site agent serves no boot.pxeBoot: inspection's boot tried it once, then sent the four commands.
    const inspecting = await t.cp.temporal.workflow.getHandle(`node:${enrolled.nodeId}:inspecting:2`).fetchHistory();
    expect(siteCommandsRun(inspecting)).toEqual([
      'boot.pxeBoot',
      'boot.prepareRamdisk',
      'power.setPower',
      'management.setBootDevice',
      'power.setPower',
      'boot.cleanUp',
    ]);
    const refused = inspecting.events?.flatMap((e) => e.activityTaskFailedEventAttributes?.failure ?? []);
    expect(refused?.map((f) => f.applicationFailureInfo?.type)).toEqual(['NotFoundError']);
    expect(inspecting.events?.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
  });

  it('refuses illegal verbs with INVALID_STATE and a stale version with CONFLICT', async () => {
    const node = await readyNode();
    const rescue = await verb(node.nodeId, 'rescue');
    expect(rescue.status).toBe(409);
    expect(rescue.body.error.code).toBe('INVALID_STATE');
    expect((await verb(node.nodeId, 'recover')).body.error.code).toBe('INVALID_STATE');
    expect((await verb(node.nodeId, 'undeploy')).body.error.code).toBe('INVALID_STATE');
    const stale = await verb(node.nodeId, 'provide', { version: node.version - 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('CONFLICT');
    expect((await get(node.nodeId)).version).toBe(node.version);
    const bad = await t.root.request<ErrorBody>('POST', `/v1/metal/nodes/${node.nodeId}/abort`, { tenantId: 'root', reason: 'x'.repeat(513) });
    expect(bad.body.error.code).toBe('INVALID_INPUT');
  });

  it('an unknown hardware profile is INVALID_INPUT', async () => {
    const res = await t.root.request<ErrorBody>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId,
      hardwareProfile: 'no-such-profile',
      bmc: { driver: 'ipmi', address: '10.0.0.9', username: 'a', password: 'b' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'hardwareProfile' } });
  });

  it('deploys a signed image (the digest is checked), sets the role, and undeploy wipes back to ready', async () => {
    const node = await readyNode();
    const image = await registerImage('metal-os@1', true);
    await deployProfile('metal-os-host', 'metal-os@1');
    expect((await verb(node.nodeId, 'deploy', { profileId: 'metal-os-host', profileVersion: 1 })).body.provisionState).toBe('deploying');
    const deployed = await settle(node.nodeId, 'deployed');
    expect(deployed.role).toBe('dedicated');
    expect(machines.get(node.nodeId)?.disk).toBe(image.source);
    expect(started(node.nodeId, 'deploy.image')[0]?.data).toMatchObject({ sha256: image.sha256, format: 'raw', compression: 'zstd' });
    const undeploy = await verb(node.nodeId, 'undeploy', { wipe: 'secure-erase' });
    expect(undeploy.body).toMatchObject({ provisionState: 'releasing', releaseWipe: 'secure-erase' });
    const ready = await settle(node.nodeId, 'ready');
    expect(ready.role).toBe('machine');
    expect(started(node.nodeId, 'disk.wipe').map((e) => (e.data as { mode: string }).mode)).toEqual(['quick', 'secure-erase']);
  });

  it('an unsigned image stops the deploy before deploy.image is sent; recover goes to releasing (which wipes) then ready', async () => {
    const node = await readyNode();
    await registerImage('metal-unsigned@1', false);
    await deployProfile('metal-unsigned-host', 'metal-unsigned@1');
    await verb(node.nodeId, 'deploy', { profileId: 'metal-unsigned-host', profileVersion: 1 });
    const failed = await settle(node.nodeId, 'failed');
    expect(failed).toMatchObject({ failedFrom: 'deploying', maintenance: true, lastError: { code: 'INVALID_STATE' } });
    expect(failed.lastError?.message).toContain('unsigned');
    expect(started(node.nodeId, 'deploy.image')).toHaveLength(0);
    expect(started(node.nodeId, 'boot.cleanUp').length).toBeGreaterThanOrEqual(3); // cleanup still ran
    const recovered = await verb(node.nodeId, 'recover');
    // recover clears the failure's error and the maintenance it set (an operator's would stay: metal-verbs-api.test.ts).
    expect(recovered.body).toMatchObject({ provisionState: 'releasing', failedFrom: null, lastError: null, maintenance: false });
    await settle(node.nodeId, 'ready');
  });

  it('abort mid-workflow runs the cleanup and lands in failed with failedFrom; recover follows the table', async () => {
    const node = await readyNode();
    const machine = machines.get(node.nodeId) as Machine;
    machine.hang = 'diag.dcgm';
    const before = started(node.nodeId, 'boot.cleanUp').length;
    await verb(node.nodeId, 'provide');
    await until(
      () => started(node.nodeId, 'diag.dcgm').length,
      (n) => n >= 2,
      20_000,
      'the second DCGM run to start',
    );
    const aborted = await verb(node.nodeId, 'abort', { reason: 'operator stop' });
    expect(aborted.body).toMatchObject({
      provisionState: 'failed',
      failedFrom: 'commissioning',
      maintenance: true,
      lastError: { code: 'ABORTED', message: 'operator stop' },
    });
    await until(
      () => started(node.nodeId, 'boot.cleanUp').length,
      (n) => n > before,
      20_000,
      'cleanup after the abort',
    );
    // The aborted child ended ABORTED after its cleanup; the node stayed failed.
    const child = ledger.entries().filter((e) => e.step.startsWith(`${node.nodeId}/`) && e.use === 'diag.dcgm' && e.event === 'done');
    expect(child).toHaveLength(1); // only the first commissioning's DCGM finished
    expect((await settle(node.nodeId, 'failed')).failedFrom).toBe('commissioning');
    machine.hang = undefined;
    expect((await verb(node.nodeId, 'recover')).body.provisionState).toBe('enrolling');
    await settle(node.nodeId, 'ready');
  });

  it('a release whose wipe is not attested fails with UNVERIFIED_WIPE instead of reaching ready', async () => {
    const node = await readyNode();
    await registerImage('metal-os@2', true);
    await deployProfile('metal-os-host-2', 'metal-os@2');
    await verb(node.nodeId, 'deploy', { profileId: 'metal-os-host-2', profileVersion: 1 });
    await settle(node.nodeId, 'deployed');
    (machines.get(node.nodeId) as Machine).wipeAttested = false;
    await verb(node.nodeId, 'undeploy');
    const failed = await settle(node.nodeId, 'failed');
    expect(failed).toMatchObject({ failedFrom: 'releasing', lastError: { code: 'UNVERIFIED_WIPE' } });
  });

  it('bulk decides each node on its own and reports per-node outcomes', async () => {
    const a = await readyNode();
    const b = await enroll(newMachine({ hang: 'inspect.oob' }));
    // A node that is not the pool's refuses the whole request, naming it (test/integration/metal-bulk.test.ts covers the rest).
    const missing = await t.root.request<ErrorBody>('POST', '/v1/metal/bulk', {
      tenantId: 'root',
      poolId,
      verb: 'provide',
      nodeIds: [a.nodeId, 'node_00000000000000000000000000'],
      reason: 're-burn-in',
    });
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', details: { path: 'nodeIds[1]' } });
    const started = await t.root.call<MetalBulkRunView>('POST', '/v1/metal/bulk', {
      tenantId: 'root',
      poolId,
      verb: 'provide',
      nodeIds: [a.nodeId, b.nodeId],
      reason: 're-burn-in',
    });
    const run = await until(
      () => t.root.call<MetalBulkPage>('GET', `/v1/metal/bulk/${started.bulkId}?tenantId=root`),
      (r) => r.status === 'finished',
      30_000,
      'the bulk run',
    );
    expect(run.counts).toMatchObject({ accepted: 1, refused: 1, pending: 0 });
    expect(run.outcomes.find((r) => r.nodeId === a.nodeId)?.outcome).toBe('accepted');
    expect(run.outcomes.find((r) => r.nodeId === b.nodeId)?.error?.code).toBe('INVALID_STATE');
    await settle(a.nodeId, 'ready');
    await verb(b.nodeId, 'abort', { reason: 'test done' });
  });
  it('rescue boots the rescue ramdisk; unrescue returns to deployed once the OS rejoins (a second call is unchanged)', async () => {
    const node = await readyNode();
    await registerImage('metal-os@3', true);
    await deployProfile('metal-os-host-3', 'metal-os@3');
    await verb(node.nodeId, 'deploy', { profileId: 'metal-os-host-3', profileVersion: 1 });
    await settle(node.nodeId, 'deployed');
    expect((await verb(node.nodeId, 'rescue')).body).toMatchObject({ provisionState: 'rescue', provisionPhase: 'booting' });
    const booted = await until(
      () => get(node.nodeId),
      (n) => n.provisionPhase === 'booted',
      20_000,
      'the rescue ramdisk',
    );
    const first = await verb(node.nodeId, 'unrescue');
    expect(first.body).toMatchObject({ provisionState: 'rescue', provisionPhase: 'unrescuing', version: booted.version + 1 });
    const second = await verb(node.nodeId, 'unrescue');
    expect(second.body.version).toBe(first.body.version);
    expect(await events(node.nodeId)).toContain('node.provision.unrescuing');
    // The installed OS comes back: its node agent's session opens anew, and the run hears agentJoined (what wait.agentJoined waits for).
    await t.cp.db.agentSession.upsert({
      where: { nodeId: node.nodeId },
      create: { nodeId: node.nodeId, siteId, role: 'node', taskQueue: `node.${node.nodeId}`, lastSeenAt: new Date() },
      update: { role: 'node', lastSeenAt: new Date() },
    });
    // The lifecycle may not have started the unrescue run yet: signal until it hears.
    const unrescuing = t.cp.temporal.workflow.getHandle(first.body.workflowId as string);
    await until(
      () =>
        unrescuing.signal(agentJoinedSignal, { role: 'node', agentNodeId: node.nodeId }).then(
          () => true,
          () => false,
        ),
      (heard) => heard,
      20_000,
      'the unrescue run to hear agentJoined',
    );
    await settle(node.nodeId, 'deployed');
  });

  it('an agentless pool runs the -oob profiles and reaches ready without a ramdisk', async () => {
    const oobPool = (await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'agentless', policy: { agent: 'none' } })).id;
    const machine = newMachine();
    const res = await t.root.request<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: oobPool,
      bmc: { driver: 'ipmi', address: '10.0.1.1', username: 'a', password: 'b' },
    });
    machines.set(res.body.nodeId, machine);
    await settle(res.body.nodeId, 'ready');
    const refs = [];
    for await (const w of t.cp.temporal.workflow.list({ query: `NodeId = "${res.body.nodeId}" AND WorkflowType = "provision"` }))
      refs.push(w.searchAttributes.ProfileRef?.[0]);
    expect(refs.sort()).toEqual(['metal-commission-oob@1', 'metal-enroll@1', 'metal-inspect-oob@1']);
    expect(started(res.body.nodeId, 'boot.prepareRamdisk')).toHaveLength(0); // no ramdisk boot
  });

  /** A ready node commissioning again, its DCGM run hanging: the state workflow runs and the lifecycle waits on it. */
  async function commissioningHung(): Promise<{ node: MetalNodeView; machine: Machine; child: string }> {
    const node = await readyNode();
    const machine = machines.get(node.nodeId) as Machine;
    machine.hang = 'diag.dcgm';
    await verb(node.nodeId, 'provide');
    await until(
      () => started(node.nodeId, 'diag.dcgm').length,
      (n) => n >= 2,
      20_000,
      'the second DCGM run to start',
    );
    return { node, machine, child: (await get(node.nodeId)).workflowId as string };
  }

  it('a lifecycle that continued-as-new while its state workflow ran applies that workflow’s outcome when it ends (by its signal)', async () => {
    const { node, machine, child } = await commissioningHung();
    const lifecycle = t.cp.temporal.workflow.getHandle(`node:${node.nodeId}`);
    const firstRun = (await lifecycle.describe()).runId;
    // Wake-ups while it waits grow its history past the limit (one at a time: a signal that lands as the run
    // continues-as-new sends it back to replay): it continues as new, and the child runs on (ABANDON).
    // Each wake-up is one event at least (its signal; a busy worker takes several in one workflow task).
    for (let sent = 0; ; sent += 1) {
      const run = await lifecycle.describe();
      if (run.runId !== firstRun || run.historyLength > HISTORY_LIMIT) break;
      expect(sent).toBeLessThanOrEqual(HISTORY_LIMIT);
      await lifecycle.signal('wake');
    }
    await until(
      () => lifecycle.describe(),
      (d) => d.runId !== firstRun,
      30_000,
      'the lifecycle to continue as new',
    );
    expect((await t.cp.temporal.workflow.getHandle(child).describe()).status.name).toBe('RUNNING');
    expect((await get(node.nodeId)).provisionState).toBe('commissioning');

    machine.hang = undefined;
    await settle(node.nodeId, 'ready');
    // The run that applied it heard the end from the child itself.
    const history = await lifecycle.fetchHistory();
    const signals = (history.events ?? []).map((e) => e.workflowExecutionSignaledEventAttributes?.signalName).filter((n) => n !== undefined && n !== 'wake');
    expect(signals).toEqual(['stateWorkflowEnded']);
    expect((await events(node.nodeId)).filter((e) => e === 'node.provision.ready')).toHaveLength(2);
  }, 180_000);

  it('an abort signalled to the lifecycle stops its state workflow, whose cleanup runs, and fails the node; an illegal one is recorded', async () => {
    const { node, machine, child } = await commissioningHung();
    const before = started(node.nodeId, 'boot.cleanUp').length;
    const lifecycle = t.cp.temporal.workflow.getHandle(`node:${node.nodeId}`);
    await lifecycle.signal('abort', 'stopped from the Web UI');
    const failed = await settle(node.nodeId, 'failed');
    expect(failed).toMatchObject({ failedFrom: 'commissioning', maintenance: true, lastError: { code: 'ABORTED', message: 'stopped from the Web UI' } });
    await until(
      () => started(node.nodeId, 'boot.cleanUp').length,
      (n) => n > before,
      20_000,
      'cleanup after the abort',
    );
    await expect(t.cp.temporal.workflow.getHandle(child).result()).rejects.toMatchObject({ cause: { type: 'ABORTED' } });
    machine.hang = undefined;

    // A failed node cannot be aborted: refused, and the refusal is an event (the lifecycle may have ended: signal-with-start).
    await t.cp.temporal.workflow.signalWithStart('nodeLifecycle', {
      workflowId: `node:${node.nodeId}`,
      taskQueue: t.config.controlQueue,
      args: [{ nodeId: node.nodeId }],
      signal: 'abort',
      signalArgs: ['once more'],
    });
    await until(
      () => events(node.nodeId),
      (types) => types.includes('node.provision.abort-refused'),
      20_000,
      'the refused abort',
    );
    expect((await get(node.nodeId)).provisionState).toBe('failed');
  });
});
