// The metal lifecycle end to end, with nothing fake but the hardware: the real API, database,
// control-plane worker and Temporal dev server; a real site agent (BMC drivers, boot server);
// emulated machines (Redfish BMCs, PXE firmware) that boot REAL ramdisk agents and, from
// their disk, an installed OS running the REAL node agent from the user data the ramdisk
// wrote. Three machines enrolled by their BMC alone reach `ready` on their own; a signed
// image served over HTTPS deploys and its OS joins as the same node; undeploy wipes back to
// ready; an abort mid-deploy cleans up and fails; recover follows the table; a tampered
// catalog row stops a deploy before any deploy.image is sent.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine } from '../../agent/emulator/machine';
import type { MetalNodeView } from '../../core/schemas/metal';
import { until } from '../helpers/boot-site';
import { sha, startE2eSite, type E2eSite } from '../helpers/e2e-site';
import { failedWorkflowTasks, historyOnceEnded } from '../helpers/ended-history';

let site: E2eSite;
/** The OS image: random bytes (a non-zero head, so the emulated firmware finds something to boot). */
const osImage = randomBytes(2 * 1024 * 1024 + 77);

const nodes: Array<{ nodeId: string; machine: Machine }> = [];

const verb = (nodeId: string, name: string, body: Record<string, unknown> = {}) => site.verb(nodeId, name, body);
const settle = (nodeId: string, state: string, timeoutMs?: number) => site.settle(nodeId, state, timeoutMs);
const diskHead = (machine: Machine, bytes = 4096) => readFileSync(machine.diskPath).subarray(0, bytes);
const registerImage = (ref: string, content: Buffer) => site.registerImage(ref, content);
const deployProfile = (id: string, imageRef: string) => site.deployProfile(id, imageRef);
const activitiesRun = (workflowId: string) => site.activitiesRun(workflowId);
const stateWorkflows = (nodeId: string) => site.stateWorkflows(nodeId);
const bootEntries = () => site.bootEntries();
const liveTokens = (nodeId: string) => site.liveTokens(nodeId);

beforeAll(async () => {
  site = await startE2eSite('e2e-site');
}, 120_000);

afterAll(async () => {
  await site?.close();
});

describe('the metal lifecycle on emulated machines', () => {
  it('three machines enrolled by their BMC alone reach ready on their own (enroll → inspect → commission)', async () => {
    for (let i = 0; i < 3; i++) {
      const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024 });
      const enrolled = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
        tenantId: 'root',
        poolId: site.poolId,
        bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
      });
      expect(enrolled).toMatchObject({ provisionState: 'enrolling', macs: [] });
      nodes.push({ nodeId: enrolled.nodeId, machine });
    }
    const ready = await Promise.all(nodes.map((n) => settle(n.nodeId, 'ready', 150_000)));
    for (const [i, node] of ready.entries()) {
      const machine = nodes[i]?.machine as Machine;
      // Out-of-band inspection found the MACs and UUID; the ramdisk's inventory agreed.
      expect(node).toMatchObject({ macs: machine.description.macs, productUuid: machine.description.uuid, power: 'off', maintenance: false });
      // The ramdisk's own inventory is stored (its sections, by the step's output schema).
      const row = await site.t.cp.db.node.findUniqueOrThrow({ where: { id: node.nodeId } });
      expect(row.inventory).toMatchObject({ system: { productUuid: machine.description.uuid }, nics: machine.description.macs.map((mac) => ({ mac })) });
      expect(machine.state).toBe('off');
      const workflows = (await stateWorkflows(node.nodeId)).sort();
      expect(workflows).toEqual([`node:${node.nodeId}:commissioning:3`, `node:${node.nodeId}:enrolling:1`, `node:${node.nodeId}:inspecting:2`]);
      // The ramdisk joined as the same node; nothing of the boot is left behind.
      expect((await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId: node.nodeId } })).map((c) => c.role)).toContain('ramdisk');
      expect(await liveTokens(node.nodeId)).toBe(0);
      // Its lifecycle came to rest without a failed workflow task (it waited for commissioning's close).
      expect(failedWorkflowTasks(await historyOnceEnded(site.t.cp.temporal.workflow.getHandle(`node:${node.nodeId}`)))).toEqual([]);
    }
    expect(bootEntries()).toEqual([]);
  }, 200_000);

  it('a signed image deploys: the disk holds its bytes and the installed OS joins as the same node; undeploy wipes back to ready', async () => {
    const { nodeId, machine } = nodes[0] as { nodeId: string; machine: Machine };
    await registerImage('e2e-os@1', osImage);
    await deployProfile('e2e-os-host', 'e2e-os@1');
    expect((await verb(nodeId, 'deploy', { profileId: 'e2e-os-host', profileVersion: 1 })).provisionState).toBe('deploying');
    const deployed = await settle(nodeId, 'deployed', 120_000);
    expect(deployed).toMatchObject({ role: 'host', power: 'on' });
    expect(sha(readFileSync(machine.diskPath).subarray(0, osImage.length))).toBe(sha(osImage));
    expect(machine.state).toBe('installed-os');
    // The installed OS's node agent: a `node` certificate of the same node, its session live.
    const certificates = await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId, role: 'node' } });
    expect(certificates).toHaveLength(1);
    const session = await site.t.cp.db.agentSession.findUniqueOrThrow({ where: { nodeId } });
    expect(session.role).toBe('node');
    expect(await site.t.cp.db.node.count({ where: { siteId: site.siteId } })).toBe(1 + nodes.length); // the site agent and the three machines: nobody joined as a new node
    const events = (await site.t.cp.db.event.findMany({ where: { subjectId: nodeId } })).map((e) => e.type);
    expect(events).toEqual(expect.arrayContaining(['node.userdata.rendered', 'security.userdata.granted', 'node.deploy.image']));
    expect(await liveTokens(nodeId)).toBe(0);
    expect(await site.t.cp.db.secret.count({ where: { purpose: { startsWith: 'userdata:' } } })).toBe(0); // the sealed document went with its workflow

    expect((await verb(nodeId, 'undeploy')).provisionState).toBe('releasing');
    const released = await settle(nodeId, 'ready', 120_000);
    expect(released).toMatchObject({ role: 'machine', power: 'off' });
    expect(diskHead(machine).every((b) => b === 0)).toBe(true);
    expect(machine.state).toBe('off');
    expect(bootEntries()).toEqual([]);
  }, 260_000);

  it('abort in the middle of a deploy runs the cleanup (no boot entry or token left) and lands in failed; recover goes through releasing to ready', async () => {
    const { nodeId, machine } = nodes[1] as { nodeId: string; machine: Machine };
    await verb(nodeId, 'deploy', { profileId: 'e2e-os-host', profileVersion: 1 });
    // In the middle: the boot entry is out and the machine is PXE-booting or in its ramdisk.
    await until('the deploy to send its boot entry', () => bootEntries().some((e) => e.nodeId === nodeId), 60_000);
    const aborted = await verb(nodeId, 'abort', { reason: 'e2e: stop this deploy' });
    expect(aborted).toMatchObject({ provisionState: 'failed', failedFrom: 'deploying', maintenance: true, lastError: { code: 'ABORTED' } });
    const workflowId = `node:${nodeId}:deploying:4`;
    await until(
      'the aborted deploy to end',
      async () => (await site.t.cp.temporal.workflow.getHandle(workflowId).describe()).status.name !== 'RUNNING',
      60_000,
    );
    expect(bootEntries().filter((e) => e.nodeId === nodeId)).toEqual([]);
    expect(await liveTokens(nodeId)).toBe(0);
    expect(await activitiesRun(workflowId)).toContain('boot.cleanUp');
    expect((await settle(nodeId, 'failed')).failedFrom).toBe('deploying');

    // failedFrom deploying → releasing (a wipe) → ready.
    expect((await verb(nodeId, 'recover')).provisionState).toBe('releasing');
    await settle(nodeId, 'ready', 120_000);
    expect(diskHead(machine).every((b) => b === 0)).toBe(true);
  }, 260_000);

  it('a tampered catalog row stops the deploy before any deploy.image is sent', async () => {
    const { nodeId, machine } = nodes[2] as { nodeId: string; machine: Machine };
    const image = await registerImage('e2e-os@2', randomBytes(64 * 1024));
    await deployProfile('e2e-os-host-2', 'e2e-os@2');
    // Someone with database access points the signed row at another artifact: its digest
    // (a signed column; the source alone is not signed, the digest on the stream guards it).
    const evil = gzipSync(randomBytes(64 * 1024));
    site.serve('/e2e-os-2.raw.gz', evil);
    await site.t.cp.db.image.update({ where: { id: image.id }, data: { sha256: sha(evil), sizeBytes: evil.length } });
    await verb(nodeId, 'deploy', { profileId: 'e2e-os-host-2', profileVersion: 1 });
    const failed = await settle(nodeId, 'failed', 120_000);
    expect(failed).toMatchObject({ failedFrom: 'deploying', lastError: { code: 'INVALID_STATE' } });
    expect(failed.lastError?.message).toMatch(/signature/);
    const workflowId = (await stateWorkflows(nodeId)).find((id) => id.includes(':deploying:')) as string;
    const activities = await activitiesRun(workflowId);
    expect(activities).toContain('deploy.deploy');
    expect(activities).not.toContain('deploy.image');
    expect(activities).toContain('boot.cleanUp');
    expect(await site.t.cp.db.event.count({ where: { subjectId: nodeId, type: 'node.deploy.image' } })).toBe(0);
    expect(diskHead(machine).every((b) => b === 0)).toBe(true);
    expect((await verb(nodeId, 'recover')).provisionState).toBe('releasing');
    await settle(nodeId, 'ready', 120_000);
  }, 260_000);
});
