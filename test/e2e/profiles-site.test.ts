// The site-side shipped profiles end to end, with nothing fake but the hardware: the real API,
// database, control-plane worker and Temporal; a real site agent driving emulated Redfish BMCs;
// emulated machines booting the REAL ramdisk agent and an installed OS running the REAL node
// agent. One site, two pools:
// - an agentless pool (policy agent: none), whose states run the -oob variants: an enrolled
//   machine reaches ready by its BMC alone (metal-inspect-oob, metal-commission-oob), the power
//   verb runs metal-power-on/-cycle/-off, and a machine deployed from a catalog ISO as virtual
//   media is released by metal-release-oob (eject, power off; released unverified, and said so);
// - an agent pool, where a deployed machine goes through metal-rescue (the rescue ramdisk
//   joins; its boot entries and tokens go) and metal-unrescue (back to its installed OS).
// Each test asserts at the hardware (the BMC's command log, the machine's state and media),
// the node row (state, power, lastError) and the events after, and that no boot entry or live
// token is left.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatedMachine } from '../../agent/emulator/redfish-bmc';
import { addImageSigner } from '../../services/images/signers';
import { imageSigningInput } from '../../core/images/signing-input';
import type { MetalNodeView } from '../../core/schemas/metal';
import { statusQuery } from '../../workflows/provision-handles';
import { until } from '../helpers/boot-site';
import { sha, startE2eSite, type E2eSite, type Machine } from '../helpers/e2e-site';

let site: E2eSite;
let oobPoolId: string;
/** The agent pool's machine, enrolled to ready in the background while the agentless tests run. */
let agentNode: Promise<{ nodeId: string; machine: Machine }>;
/** The agentless machine the oob tests share. */
let oob: { nodeId: string; machine: Machine; bmc: EmulatedMachine };

const verb = (nodeId: string, name: string, body: Record<string, unknown> = {}) => site.verb(nodeId, name, body);
const bmcOf = (machine: Machine): EmulatedMachine => {
  const emulated = site.fleet.bmc.get(machine.description.id);
  if (!emulated) throw new Error(`no emulated BMC for ${machine.description.id}`);
  return emulated;
};
/** What the BMC carried out from `from` on (faults aside). */
const carriedOut = (bmc: EmulatedMachine, from: number) => bmc.commands.slice(from).filter((c) => !c.startsWith('fault:'));
const eventsOf = async (nodeId: string, since: number) =>
  (await site.t.cp.db.event.findMany({ where: { subjectId: nodeId, seq: { gt: since } }, orderBy: { seq: 'asc' } })).map((e) => ({
    type: e.type,
    data: e.data as Record<string, unknown>,
  }));
const lastSeq = async () => (await site.t.cp.db.event.findFirst({ orderBy: { seq: 'desc' } }))?.seq ?? 0;
/** Waits for the fire-and-forget events too (on PostgreSQL the read can come first). */
const eventsUntil = (nodeId: string, since: number, types: string[]) =>
  until(
    `events ${types.join(', ')} of ${nodeId}`,
    async () => {
      const events = await eventsOf(nodeId, since);
      return types.every((t) => events.some((e) => e.type === t)) ? events : undefined;
    },
    30_000,
  );
/** The plan steps a workflow ran (skipped ones aside), cleanup included, from its status query: a step the workflow runs itself schedules no activity of its name. */
const stepsOf = async (workflowId: string) =>
  (await site.t.cp.temporal.workflow.getHandle(workflowId).query(statusQuery)).history.filter((step) => step.outcome !== 'skipped').map((step) => step.use);
/** The steps of the node's state workflow that ran `state` last. */
const activitiesOf = async (nodeId: string, state: string) => {
  const seqOf = (id: string) => Number(id.split(':').at(-1));
  const id = (await site.stateWorkflows(nodeId))
    .filter((w) => w.includes(`:${state}:`))
    .sort((a, b) => seqOf(a) - seqOf(b))
    .at(-1);
  if (!id) throw new Error(`no ${state} workflow of ${nodeId}`);
  return stepsOf(id);
};
const nothingLeft = async (nodeId: string) => {
  expect(site.bootEntries().filter((e) => e.nodeId === nodeId)).toEqual([]);
  expect(await site.liveTokens(nodeId)).toBe(0);
};

beforeAll(async () => {
  site = await startE2eSite('e2e-profiles-site');
  oobPoolId = (
    await site.t.root.call<{ id: string }>('POST', '/v1/pools', {
      tenantId: 'root',
      siteId: site.siteId,
      class: 'e2e-oob',
      policy: { agent: 'none', allowEmulatedMachines: true },
    })
  ).id;
  agentNode = site.enrollToReady(1).then(([first]) => first as { nodeId: string; machine: Machine });
  agentNode.catch(() => undefined); // awaited by the rescue test
}, 120_000);

afterAll(async () => {
  await site?.close();
});

describe('site-side shipped profiles against the real site agent', () => {
  it('metal-enroll, metal-inspect-oob, metal-commission-oob: an agentless machine reaches ready by its BMC alone, never booted', async () => {
    const since = await lastSeq();
    const { machine, bmc: credentials } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024 });
    const enrolled = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: oobPoolId,
      bmc: { driver: 'redfish', address: credentials.address, username: credentials.username, password: credentials.password },
    });
    const ready = await site.settle(enrolled.nodeId, 'ready', 60_000);
    oob = { nodeId: enrolled.nodeId, machine, bmc: bmcOf(machine) };

    // The node row: what the BMC told (MACs, UUID), powered off, no failure.
    expect(ready).toMatchObject({ macs: machine.description.macs, productUuid: machine.description.uuid, power: 'off', maintenance: false, lastError: null });
    expect(await activitiesOf(oob.nodeId, 'inspecting')).toEqual(['inspect.oob']);
    expect(await activitiesOf(oob.nodeId, 'commissioning')).toEqual(['power.setPower']);
    expect((await site.stateWorkflows(oob.nodeId)).length).toBe(3);
    // The hardware: nothing changed (commissioning's power off found it off), never booted, no ramdisk.
    expect(carriedOut(oob.bmc, 0)).toEqual([]);
    expect(oob.bmc.powerState).toBe('Off');
    expect(machine.bootCount).toBe(0);
    expect(machine.state).toBe('off');
    expect(await site.t.cp.db.nodeCertificate.count({ where: { nodeId: oob.nodeId } })).toBe(0);
    await nothingLeft(oob.nodeId);
    const events = await eventsUntil(oob.nodeId, since, ['node.enrolled', 'node.provision.inspecting', 'node.provision.commissioning', 'node.provision.ready']);
    expect(events.filter((e) => e.type === 'node.provision.failed')).toEqual([]);
  }, 90_000);

  it('metal-power-on, metal-power-cycle, metal-power-off: each one BMC reset, the node records the power asked', async () => {
    const from = oob.bmc.commands.length;
    const since = await lastSeq();
    const power = async (action: string) => {
      const answer = await site.t.root.call<MetalNodeView & { powerWorkflowId: string }>('POST', `/v1/metal/nodes/${oob.nodeId}/power`, {
        tenantId: 'root',
        action,
      });
      await site.t.cp.temporal.workflow.getHandle(answer.powerWorkflowId).result();
      expect(await stepsOf(answer.powerWorkflowId)).toEqual(['power.setPower']);
      return site.get(oob.nodeId);
    };
    expect(await power('on')).toMatchObject({ provisionState: 'ready', power: 'on', lastError: null, workflowId: null });
    expect(oob.bmc.powerState).toBe('On');
    expect(await power('cycle')).toMatchObject({ provisionState: 'ready', power: 'on', lastError: null });
    expect(oob.bmc.powerState).toBe('On');
    expect(await power('off')).toMatchObject({ provisionState: 'ready', power: 'off', lastError: null });
    expect(oob.bmc.powerState).toBe('Off');
    expect(oob.machine.state).toBe('off');
    // Each action one reset at the BMC: none sent twice, nothing else sent.
    expect(carriedOut(oob.bmc, from)).toEqual(['reset:On', 'reset:PowerCycle', 'reset:ForceOff']);
    const events = await until(
      'three power requests',
      async () => {
        const all = (await eventsOf(oob.nodeId, since)).filter((e) => e.type === 'node.power.requested');
        return all.length === 3 ? all : undefined;
      },
      30_000,
    );
    expect(events.map((e) => e.data.action)).toEqual(['on', 'cycle', 'off']);
    await nothingLeft(oob.nodeId);
  }, 60_000);

  it('metal-release-oob: a machine deployed from a catalog ISO as virtual media is ejected and powered off, released unverified', async () => {
    // A signed catalog ISO and a profile that boots it from the virtual CD.
    const iso = randomBytes(64 * 1024);
    const osRow = await site.registerImage('e2e-ps-probe@1', randomBytes(1024)); // the image server's origin, from a row it serves
    const origin = new URL((await site.t.cp.db.image.findUniqueOrThrow({ where: { id: osRow.id } })).source).origin;
    site.serve('/e2e-live.iso', iso);
    const signer = generateKeyPairSync('ed25519');
    await addImageSigner(site.t.cp.db, {
      tenantId: 'root',
      id: 'e2e-iso-signer',
      publicKeyPem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    });
    const input = {
      tenantId: 'root',
      ref: 'e2e-live@1',
      kind: 'iso',
      format: 'iso',
      compression: 'none',
      sha256: sha(iso),
      sizeBytes: iso.length,
      source: `${origin}/e2e-live.iso`,
    };
    const signature = sign(null, imageSigningInput(input), signer.privateKey).toString('base64');
    expect((await site.t.root.call<{ verified: boolean }>('POST', '/v1/images', { ...input, signerId: 'e2e-iso-signer', signature })).verified).toBe(true);
    await site.t.root.call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: {
        id: 'e2e-live-iso',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'media.insert', with: { image: 'e2e-live@1' } },
          { use: 'management.setBootDevice', on: 'site', with: { device: 'cd', persistent: true } },
          { use: 'power.setPower', on: 'site', with: { action: 'cycle' } },
        ],
        cleanup: [],
      },
    });

    const from = oob.bmc.commands.length;
    expect((await verb(oob.nodeId, 'deploy', { profileId: 'e2e-live-iso', profileVersion: 1 })).provisionState).toBe('deploying');
    const deployed = await site.settle(oob.nodeId, 'deployed', 60_000);
    expect(deployed).toMatchObject({ power: 'on', lastError: null });
    expect(oob.bmc).toMatchObject({ mediaInserted: true, powerState: 'On' });
    expect(carriedOut(oob.bmc, from)).toEqual(['media:insert:e2e-live.iso', 'boot:Cd/Continuous', 'reset:PowerCycle']);

    const since = await lastSeq();
    const releaseFrom = oob.bmc.commands.length;
    expect((await verb(oob.nodeId, 'undeploy')).provisionState).toBe('releasing');
    const released = await site.settle(oob.nodeId, 'ready', 60_000);
    expect(await activitiesOf(oob.nodeId, 'releasing')).toEqual(['media.eject', 'power.setPower']);
    // The node row: ready, off, a machine again, no failure.
    expect(released).toMatchObject({ provisionState: 'ready', power: 'off', role: 'machine', lastError: null, maintenance: false });
    // The hardware: the CD ejected, then powered off; nothing else.
    expect(carriedOut(oob.bmc, releaseFrom)).toEqual(['media:eject', 'reset:ForceOff']);
    expect(oob.bmc).toMatchObject({ mediaInserted: false, mediaImage: '', powerState: 'Off' });
    expect(oob.machine.state).toBe('off');
    await nothingLeft(oob.nodeId);
    // Released without an attested wipe (no agent ever ran there), and said so.
    const events = await eventsUntil(oob.nodeId, since, ['node.provision.releasing', 'node.release.unverified', 'node.provision.ready']);
    expect(events.find((e) => e.type === 'node.release.unverified')?.data).toMatchObject({ wipe: 'quick' });
    expect(events.filter((e) => e.type === 'node.provision.failed')).toEqual([]);
  }, 90_000);

  it('metal-rescue then metal-unrescue: the rescue ramdisk joins and its boot entries and tokens go; unrescue boots the installed OS back', async () => {
    const { nodeId, machine } = await agentNode;
    const bmc = bmcOf(machine);
    const osImage = randomBytes(256 * 1024 + 11);
    await site.registerImage('e2e-ps-os@1', osImage);
    await site.deployProfile('e2e-ps-host', 'e2e-ps-os@1');
    await verb(nodeId, 'deploy', { profileId: 'e2e-ps-host', profileVersion: 1 });
    await site.settle(nodeId, 'deployed', 120_000);
    expect(machine.state).toBe('installed-os');

    // Rescue: power off, one-time PXE, power on at the BMC; the rescue ramdisk joins as the same node.
    let since = await lastSeq();
    let from = bmc.commands.length;
    const ramdiskCertificates = await site.t.cp.db.nodeCertificate.count({ where: { nodeId, role: 'ramdisk' } });
    expect((await verb(nodeId, 'rescue')).provisionState).toBe('rescue');
    const rescued = await site.settle(nodeId, 'rescue', 90_000);
    expect(rescued).toMatchObject({ provisionPhase: 'booted', lastError: null, maintenance: false });
    // Its boot entries and discovery tokens went once the ramdisk joined (not 2 h later).
    await nothingLeft(nodeId);
    expect(await activitiesOf(nodeId, 'rescue')).toEqual(expect.arrayContaining(['metal.ensureRamdisk', 'boot.cleanUp']));
    expect(machine.state).toBe('ramdisk');
    expect(await site.t.cp.db.nodeCertificate.count({ where: { nodeId, role: 'ramdisk' } })).toBe(ramdiskCertificates + 1);
    const rescueCommands = carriedOut(bmc, from);
    expect(rescueCommands.filter((c) => c.startsWith('reset:') || c.startsWith('boot:'))).toEqual(['reset:ForceOff', 'boot:Pxe/Once', 'reset:On']);
    await eventsUntil(nodeId, since, ['node.provision.rescue']);

    // Unrescue: disk persistently, one power cycle, the installed OS's node agent rejoins.
    since = await lastSeq();
    from = bmc.commands.length;
    expect(await verb(nodeId, 'unrescue')).toMatchObject({ provisionState: 'rescue', provisionPhase: 'unrescuing' });
    const back = await site.settle(nodeId, 'deployed', 90_000);
    expect(back).toMatchObject({ provisionPhase: null, power: 'on', role: 'host', lastError: null, maintenance: false });
    expect(await activitiesOf(nodeId, 'rescue')).toEqual(['management.setBootDevice', 'power.setPower', 'wait.agentJoined', 'boot.cleanUp']);
    expect(carriedOut(bmc, from)).toEqual(['boot:Hdd/Continuous', 'reset:PowerCycle']);
    expect(machine.state).toBe('installed-os');
    expect((await site.t.cp.db.agentSession.findUniqueOrThrow({ where: { nodeId } })).role).toBe('node');
    expect(sha(readFileSync(machine.diskPath).subarray(0, osImage.length))).toBe(sha(osImage)); // no reinstall
    await nothingLeft(nodeId);
    const events = await eventsUntil(nodeId, since, ['node.provision.unrescuing', 'node.provision.deployed']);
    expect(events.filter((e) => e.type === 'node.provision.failed')).toEqual([]);
  }, 240_000);
});
