// End to end on an emulated machine: a provision run whose first step is metal.ensureRamdisk
// sets one-time PXE and power-cycles the machine through its emulated Redfish BMC via the
// real site agent; the machine's "firmware" fetches chain.ipxe and /boot/ipxe from the site
// agent's boot server and starts a REAL ramdisk agent, which joins through the discovery
// attestor as the SAME node and runs inventory.refresh and disk.wipe on its disk file.
// boot.cleanUp leaves no boot entry, token or stored bearer behind. Then deploy.image
// streams a gzip image from a local HTTP server onto the disk file (bytes and digest checked),
// and a wrong digest is DRIVER_ERROR.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from '../../agent/emulator/fleet';
import type { Machine } from '../../agent/emulator/machine';
import type { SiteAgent } from '../../agent/site/main';
import { verifyAttestation } from '../../services/attestations/verify';
import { DISCOVERY_SECRET_PURPOSE } from '../../services/boot/discovery-tokens';
import { bmcOperationId } from '../../core/bmc-operation-id';
import type { ProvisionResult } from '../../core/plan';
import type { AgentCommandInput } from '../../workflows/agent-command';
import { activeAgent, enrollMachine, startBootSite, until, type BootSite } from '../helpers/boot-site';
import { siteCommandsRun } from '../helpers/history-activities';
import { sessionQueue } from '../helpers/provision';

let site: BootSite;
let agent: SiteAgent;
let fleet: Fleet;
let imageServer: http.Server;
let imageUrl: string;
const image = randomBytes(3 * 1024 * 1024 + 123);
const gz = gzipSync(image);
const gzDigest = createHash('sha256').update(gz).digest('hex');

beforeAll(async () => {
  site = await startBootSite('emulator-boot-site');
  agent = await site.startAgent();
  await activeAgent(agent);
  fleet = await Fleet.start({ dataDir: `${site.t.config.dataDir}/fleet`, bootServerUrl: () => agent.bootServer?.url, sleepScale: 0.05 });
  imageServer = http.createServer((req, res) => {
    if (req.url !== '/image.raw.gz') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(gz);
  });
  await new Promise<void>((r) => imageServer.listen(0, '127.0.0.1', () => r()));
  imageUrl = `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}/image.raw.gz`;
  await site.t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id: 'boot-e2e',
      version: 1,
      target: 'metal',
      description: 'ramdisk boot, inventory and a quick wipe',
      steps: [
        { use: 'metal.ensureRamdisk', timeout: '3m' },
        { use: 'inventory.refresh', on: 'ramdisk' },
        { use: 'disk.wipe', on: 'ramdisk', with: { mode: 'quick' } },
      ],
      cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
    },
  });
}, 120_000);

afterAll(async () => {
  await fleet?.close();
  await agent?.stop();
  imageServer?.close();
  await site?.t.close();
});

async function runOnRamdisk(nodeId: string, activity: string, withInput: Record<string, unknown>): Promise<unknown> {
  const command: AgentCommandInput = {
    taskQueue: await sessionQueue(site.t.cp.db, nodeId),
    activity,
    input: {
      workflowId: `test:${nodeId}`,
      stepKey: 'steps[0]',
      use: activity,
      with: withInput as never,
      target: { tenantId: 'root', nodeId, siteId: site.siteId, provisionState: 'deploying', labels: {} },
    },
    timeoutMs: 60_000,
  };
  return site.t.cp.temporal.workflow.execute('agentCommand', {
    taskQueue: site.t.config.controlQueue,
    workflowId: `test:${nodeId}:${activity}:${randomBytes(3).toString('hex')}`,
    args: [command],
  });
}

describe('an emulated machine boots into a real ramdisk', () => {
  let machine: Machine;
  let nodeId: string;

  it('metal.ensureRamdisk PXE-boots it; the ramdisk joins as the same node and runs inventory and a wipe', async () => {
    const added = await fleet.add({ diskBytes: 16 * 1024 * 1024 });
    machine = added.machine;
    nodeId = await enrollMachine(site, machine, added.bmc);
    // Something on the disk, so the wipe has work to do.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(machine.diskPath, Buffer.alloc(16 * 1024 * 1024, 0xab));

    const started = await site.t.root.call<{ workflowId: string }>('POST', '/v1/profiles/boot-e2e/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'commissioning',
    });
    const result = (await site.t.cp.temporal.workflow.getHandle(started.workflowId).result()) as ProvisionResult;
    expect(result.history.map((h) => `${h.use}:${h.outcome}`)).toEqual([
      'metal.ensureRamdisk:succeeded',
      'inventory.refresh:succeeded',
      'disk.wipe:succeeded',
      'boot.cleanUp:succeeded',
    ]);

    const ensured = result.outputs['steps[0]'] as { booted: boolean; macs: string[] };
    expect(ensured.booted).toBe(true);
    expect(ensured.macs).toEqual(machine.description.macs);
    expect(machine.state).toBe('ramdisk');
    expect(machine.ramdisk?.nodeId).toBe(nodeId);

    // The same node, with a ramdisk certificate of at most two hours.
    const certificates = await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId } });
    expect(certificates.map((c) => c.role)).toEqual(['ramdisk']);
    const lifetime = (certificates[0]?.notAfter.getTime() ?? 0) - (certificates[0]?.notBefore.getTime() ?? 0);
    expect(lifetime).toBeLessThanOrEqual(2 * 3_600_000 + 60_000);
    expect(await site.t.cp.db.node.count({ where: { siteId: site.siteId, role: 'ramdisk' } })).toBe(0);

    const inventory = result.outputs['steps[1]'] as {
      sections: { system: { productUuid: string }; nics: Array<{ mac: string }>; disks: Array<{ sizeBytes: number }> };
    };
    expect(inventory.sections.system.productUuid).toBe(machine.description.uuid);
    expect(inventory.sections.nics.map((n) => n.mac)).toEqual(machine.description.macs);
    expect(inventory.sections.disks[0]?.sizeBytes).toBe(16 * 1024 * 1024);

    // The wipe is attested: the control plane's check passes with the ramdisk's certificate, and every disk read back.
    const runStartedAt = (await site.t.cp.temporal.workflow.getHandle(started.workflowId).describe()).startTime;
    const verified = await verifyAttestation(site.t.cp.db, result.outputs['steps[2]'], {
      context: { use: 'disk.wipe', nodeId, workflowId: started.workflowId, stepKey: 'steps[2]' },
      role: 'ramdisk',
      runStartedAt,
    });
    expect(verified.serial).toBe(certificates[0]?.serial);
    expect((verified.result.disks as Array<{ readBack: boolean }>).every((d) => d.readBack)).toBe(true);
    const disk = readFileSync(machine.diskPath);
    // quick zeroes the first and last 64 MiB: all of this 16 MiB disk, the 0xab written at 2 MiB included.
    expect(disk.length).toBe(16 * 1024 * 1024);
    expect(disk.every((b) => b === 0)).toBe(true);

    // boot.cleanUp: no entry, no live token, no stored bearer.
    expect(agent.bootServer && JSON.parse(readFileSync(`${agent.identity.dataDir}/boot-entries.json`, 'utf8')).entries).toEqual([]);
    const tokens = await site.t.cp.db.joinToken.findMany({ where: { nodeId, role: 'discovery' } });
    expect(tokens.length).toBe(machine.description.macs.length);
    expect(tokens.every((t) => t.usesLeft === 0 || t.revokedAt !== null)).toBe(true);
    expect(await site.t.cp.db.secret.count({ where: { purpose: { startsWith: DISCOVERY_SECRET_PURPOSE } } })).toBe(0);
    // The bearer never reached an event.
    const events = await site.t.cp.db.event.findMany({ where: { subjectId: nodeId } });
    expect(JSON.stringify(events)).not.toMatch(/ifjt_/);

    // The boot was one site command (boot.pxeBoot) with one BMC access, not four: its BMC
    // commands each ran once, under the operation ids they have as commands of their own.
    expect(siteCommandsRun(await site.t.cp.temporal.workflow.getHandle(started.workflowId).fetchHistory())).toEqual(['boot.pxeBoot', 'boot.cleanUp']);
    const operations = await site.t.cp.db.bmcOperation.findMany({ where: { workflowId: started.workflowId }, orderBy: { startedAt: 'asc' } });
    expect(operations.map((o) => [o.id, o.command, o.state])).toEqual([
      [bmcOperationId(started.workflowId, 'steps[0]', 'power.set.off'), 'power.set(off)', 'succeeded'],
      [bmcOperationId(started.workflowId, 'steps[0]', 'boot.set.pxe.once'), 'boot.set(pxe,once)', 'succeeded'],
      [bmcOperationId(started.workflowId, 'steps[0]', 'power.set.on'), 'power.set(on)', 'succeeded'],
    ]);
    expect(await site.t.cp.db.event.count({ where: { type: 'security.bmc-access.granted', subjectId: nodeId } })).toBe(1);
  }, 120_000);

  it('a second run while the ramdisk is connected does nothing to boot it', async () => {
    const before = machine.bootCount;
    await site.t.root.call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: {
        id: 'boot-e2e-again',
        version: 1,
        target: 'metal',
        steps: [{ use: 'metal.ensureRamdisk', timeout: '1m' }],
        cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
      },
    });
    const started = await site.t.root.call<{ workflowId: string }>('POST', '/v1/profiles/boot-e2e-again/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'inspecting',
    });
    const result = (await site.t.cp.temporal.workflow.getHandle(started.workflowId).result()) as ProvisionResult;
    expect(result.outputs['steps[0]']).toMatchObject({ booted: false, alreadyConnected: true });
    expect(machine.bootCount).toBe(before);
  }, 60_000);

  it('each boot’s ramdisk serves a queue of its own, named by its key: the run’s ramdisk steps go to the one it booted', async () => {
    const queueOfBoot = new RegExp(`^ramdisk\\.${nodeId}\\.[0-9a-f]{16}$`);
    const first = machine.ramdisk?.taskQueue;
    expect(first).toMatch(queueOfBoot);
    expect(await sessionQueue(site.t.cp.db, nodeId)).toBe(first);
    // Powered off behind the control plane's back: its session still looks fresh, so the run asks it first, then boots.
    await machine.powerOff();
    const started = await site.t.root.call<{ workflowId: string }>('POST', '/v1/profiles/boot-e2e/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'commissioning',
    });
    const handle = site.t.cp.temporal.workflow.getHandle(started.workflowId);
    const result = (await handle.result()) as ProvisionResult;
    expect(result.outputs['steps[0]']).toMatchObject({ booted: true });
    const second = machine.ramdisk?.taskQueue;
    expect(second).toMatch(queueOfBoot);
    expect(second).not.toBe(first);
    expect(await sessionQueue(site.t.cp.db, nodeId)).toBe(second);
    const { events } = await handle.fetchHistory();
    const scheduled = (events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
    const onRamdisk = scheduled.filter((a) => a.activityType?.name === 'inventory.refresh' || a.activityType?.name === 'disk.wipe');
    // The probe of the powered-off ramdisk went to its queue; the steps after the boot, to the new one's.
    expect(onRamdisk.map((a) => `${a.activityType?.name}@${a.taskQueue?.name}`)).toEqual([
      `inventory.refresh@${first}`,
      `inventory.refresh@${second}`,
      `disk.wipe@${second}`,
    ]);
  }, 120_000);

  it('deploy.image streams a gzip image onto the disk file with the digest checked on the stream', async () => {
    const answer = (await runOnRamdisk(nodeId, 'deploy.image', {
      source: imageUrl,
      sha256: gzDigest,
      format: 'raw',
      compression: 'gzip',
      sizeBytes: gz.length,
    })) as { sha256: string; bytesWritten: number };
    expect(answer).toMatchObject({ sha256: gzDigest, bytesWritten: image.length });
    const disk = readFileSync(machine.diskPath);
    expect(createHash('sha256').update(disk.subarray(0, image.length)).digest('hex')).toBe(createHash('sha256').update(image).digest('hex'));
  }, 60_000);

  it('a wrong digest is DRIVER_ERROR and leaves no bootable image', async () => {
    const error = await runOnRamdisk(nodeId, 'deploy.image', { source: imageUrl, sha256: 'f'.repeat(64), compression: 'gzip' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause?.cause as { type?: string; message: string } | undefined;
    expect(cause?.type).toBe('DRIVER_ERROR');
    expect(cause?.message).toContain('digest');
    expect(
      readFileSync(machine.diskPath)
        .subarray(0, 512)
        .every((b) => b === 0),
    ).toBe(true);
  }, 60_000);

  it('an activity that is not a ramdisk kind is refused', async () => {
    const error = await runOnRamdisk(nodeId, 'power.setPower', { action: 'off' }).catch((e: unknown) => e);
    expect(((error as WorkflowFailedError).cause?.cause as { type?: string }).type).toBe('UNSUPPORTED');
  }, 60_000);

  it('a machine with no known MAC and no product UUID to discover one by is INVALID_STATE', async () => {
    const added = await fleet.add();
    const other = await enrollMachine(site, added.machine, added.bmc);
    await site.t.cp.db.node.update({ where: { id: other }, data: { macs: [], productUuid: null } });
    const started = await site.t.root.call<{ workflowId: string }>('POST', '/v1/profiles/boot-e2e/runs', {
      tenantId: 'root',
      nodeId: other,
      provisionState: 'commissioning',
    });
    const error = await site.t.cp.temporal.workflow
      .getHandle(started.workflowId)
      .result()
      .catch((e: unknown) => e);
    expect(((error as WorkflowFailedError).cause as { type?: string }).type).toBe('INVALID_STATE');
    await until('nothing to boot', () => added.machine.state === 'off');
  }, 60_000);
});
