// PXE discovery end to end (spec 001, "Discovering new machines"): machines whose BMC names
// no NICs (as an IPMI BMC cannot) are enrolled with their product UUID alone. metal's own
// PXE boot (power off, one-time PXE, power on) boots each with no boot entry; the real site agent lists what it saw; the
// control plane makes its MAC the machine's candidate and waits. An operator confirms it once
// through the REST route and once with `temporal workflow signal`, and each machine reaches
// ready. A pool that trusts its provisioning network binds the candidate at once, and its
// identity backstop stops a host that claimed another machine's UUID before anything is
// written to it. Every refusal of metal.confirmMac is checked on the way.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Machine } from '../../agent/emulator/machine';
import { repoRoot } from '../../services/config';
import { CODEC_PATH } from '../../services/sealing';
import type { MetalNodeView } from '../../core/schemas/metal';
import { until } from '../helpers/boot-site';
import { startE2eSite, type E2eSite } from '../helpers/e2e-site';

let site: E2eSite;

beforeAll(async () => {
  site = await startE2eSite('pxe-discovery');
}, 120_000);

afterAll(async () => {
  await site?.close();
});

interface DiscoveredItem {
  mac: string;
  productUuid: string | null;
  nodeId?: string;
  candidateFor?: string;
}

async function enrollByUuid(machine: Machine, bmc: { address: string; username: string; password: string }, poolId = site.poolId): Promise<MetalNodeView> {
  return site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
    tenantId: 'root',
    poolId,
    productUuid: machine.description.uuid,
    bmc: { driver: 'redfish', ...bmc },
  });
}

const discovered = async () => (await site.t.root.call<{ items: DiscoveredItem[] }>('GET', `/v1/sites/${site.siteId}/discovered?tenantId=root`)).items;
const confirm = (nodeId: string, mac: unknown) =>
  site.t.root.request<{ error?: { code: string; message: string; details?: Record<string, unknown> } } & Partial<MetalNodeView>>(
    'POST',
    `/v1/metal/nodes/${nodeId}/confirm-mac`,
    { tenantId: 'root', mac },
  );
const events = async (type: string, nodeId: string) =>
  (await site.t.cp.db.event.findMany({ where: { type, subjectId: nodeId }, orderBy: { seq: 'asc' } })).map((e) => e.data as Record<string, unknown>);

/** Waits until the node's MAC is its candidate: listed as discovered, shown in its metal view, and named as the wait. */
async function candidateOf(nodeId: string, mac: string): Promise<void> {
  await until(
    `${mac} listed as ${nodeId}'s candidate`,
    async () => (await discovered()).some((item) => item.mac === mac && item.candidateFor === nodeId),
    120_000,
  );
  expect(await site.get(nodeId)).toMatchObject({ provisionState: 'inspecting', macs: [], discoveredMac: mac });
  await until(
    'the status names the wait',
    async () =>
      (await site.t.root.call<{ waitingFor: string | null }>('GET', `/v1/metal/nodes/${nodeId}/status?tenantId=root`)).waitingFor === 'metal.confirmMac',
    30_000,
  );
  expect(await events('node.pxe-mac.discovered', nodeId)).toEqual([expect.objectContaining({ nodeId, mac, siteId: site.siteId, bound: false })]);
}

describe('PXE discovery and metal.confirmMac', () => {
  let first: { nodeId: string; machine: Machine };

  it('a machine enrolled by UUID alone becomes a candidate, is confirmed through the REST route (after each refusal) and reaches ready', async () => {
    const other = await site.fleet.add({ diskBytes: 8 * 1024 * 1024 });
    const otherNode = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: site.poolId,
      macs: other.machine.description.macs,
      bmc: { driver: 'redfish', ...other.bmc },
    });
    const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024, bmcReportsMacs: false });
    const enrolled = await enrollByUuid(machine, bmc);
    expect(enrolled).toMatchObject({ macs: [], macSource: null, discoveredMac: null });
    first = { nodeId: enrolled.nodeId, machine };
    const mac = machine.description.macs[0] as string;
    await candidateOf(enrolled.nodeId, mac);

    // Refused, each with the spec's code, and nothing stored.
    expect(await confirm(enrolled.nodeId, 'not-a-mac')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', details: { path: 'mac' } } } });
    const taken = await confirm(enrolled.nodeId, other.machine.description.macs[0]);
    expect(taken).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT', details: { path: 'mac', nodeId: otherNode.nodeId } } } });
    expect(await site.get(enrolled.nodeId)).toMatchObject({ macs: [] });

    const confirmed = await confirm(enrolled.nodeId, mac.toUpperCase());
    expect(confirmed).toMatchObject({ status: 200, body: { macs: [mac], macSource: 'operator', discoveredMac: null } });
    const ready = await site.settle(enrolled.nodeId, 'ready', 150_000);
    expect(ready).toMatchObject({ macs: [mac], macSource: 'operator', productUuid: machine.description.uuid, power: 'off' });
    expect(await events('node.pxe-mac.confirmed', enrolled.nodeId)).toEqual([
      expect.objectContaining({ nodeId: enrolled.nodeId, mac, discovered: true, requestId: expect.any(String) }),
    ]);
    // The MAC is the node's now: wherever the list still shows it, it names the node, as no one's candidate.
    for (const item of (await discovered()).filter((i) => i.mac === mac)) expect([item.nodeId, item.candidateFor]).toEqual([enrolled.nodeId, undefined]);

    // A node that already has its MACs refuses another.
    expect(await confirm(enrolled.nodeId, '02:00:00:00:00:01')).toMatchObject({ status: 409, body: { error: { code: 'INVALID_STATE' } } });
  }, 400_000);

  it('confirmed with `temporal workflow signal` on node:<id>: the same path, and a refused signal shows in the status query', async () => {
    const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024, bmcReportsMacs: false });
    const enrolled = await enrollByUuid(machine, bmc);
    const mac = machine.description.macs[0] as string;
    await candidateOf(enrolled.nodeId, mac);

    // Asynchronously: the control-plane worker shares this process and must answer the query.
    // Histories are sealed: the CLI reads through the API's codec with a root credential, as an operator sets it (docs/signals.md).
    const env = { ...process.env, TEMPORAL_CODEC_ENDPOINT: `${site.t.cp.url}${CODEC_PATH}`, TEMPORAL_CODEC_AUTH: `Bearer ${site.t.cp.rootCredential.bearer}` };
    const temporal = async (...args: string[]) =>
      (await promisify(execFile)(path.join(repoRoot, '.tools/bin/temporal'), [...args, '--address', inject('temporalAddress')], { encoding: 'utf8', env }))
        .stdout;
    // First a MAC another machine has: the signal cannot answer, the status query and an event say why.
    await temporal(
      'workflow',
      'signal',
      '--workflow-id',
      `node:${enrolled.nodeId}`,
      '--name',
      'confirmMac',
      '--input',
      JSON.stringify(first.machine.description.macs[0]),
    );
    await until(
      'the refused signal in the status query',
      async () => {
        const status = JSON.parse(await temporal('workflow', 'query', '--workflow-id', `node:${enrolled.nodeId}`, '--type', 'status', '--output', 'json')) as {
          queryResult: Array<{ rejectedSignals: Array<{ name: string; reason: string }> | null }>;
        };
        // The Temporal CLI prints an empty list as null.
        return (status.queryResult[0]?.rejectedSignals ?? []).some((r) => r.name === 'confirmMac' && r.reason.startsWith('CONFLICT'));
      },
      30_000,
    );
    expect(await events('node.pxe-mac.refused', enrolled.nodeId)).toEqual([expect.objectContaining({ code: 'CONFLICT' })]);

    await temporal('workflow', 'signal', '--workflow-id', `node:${enrolled.nodeId}`, '--name', 'confirmMac', '--input', JSON.stringify(mac));
    const ready = await site.settle(enrolled.nodeId, 'ready', 150_000);
    expect(ready).toMatchObject({ macs: [mac], macSource: 'operator' });
    expect(await events('node.pxe-mac.confirmed', enrolled.nodeId)).toEqual([
      expect.objectContaining({ mac, discovered: true, requestId: expect.stringMatching(/^signal:node:/) }),
    ]);
  }, 400_000);

  it('a pool that trusts its provisioning network binds the candidate at once; a host claiming another machine’s UUID fails the identity backstop before anything is written', async () => {
    const trusting = (
      await site.t.root.call<{ id: string }>('POST', '/v1/pools', {
        tenantId: 'root',
        siteId: site.siteId,
        class: 'e2e-trusting',
        policy: { trustProvisioningNetwork: true, allowEmulatedMachines: true },
      })
    ).id;
    const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024, bmcReportsMacs: false });
    const honest = await enrollByUuid(machine, bmc, trusting);
    const ready = await site.settle(honest.nodeId, 'ready', 200_000);
    expect(ready).toMatchObject({ macs: machine.description.macs.slice(0, 1), macSource: 'discovered', discoveredMac: null });
    expect(await events('node.pxe-mac.discovered', honest.nodeId)).toEqual([expect.objectContaining({ bound: true })]);

    // The BMC powers a host whose firmware claims, on its first boot, a UUID that is not its
    // own; its ramdisk then joins honestly (the assertion of its second boot carries its real
    // UUID), so only the backstop can tell.
    const claimed = randomUUID();
    const rogue = await site.fleet.add({ diskBytes: 8 * 1024 * 1024, bmcReportsMacs: false, firmwareUuid: claimed });
    const node = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: trusting,
      productUuid: claimed,
      bmc: { driver: 'redfish', ...rogue.bmc },
    });
    const failed = await site.settle(node.nodeId, 'failed', 200_000);
    expect(failed.lastError).toMatchObject({ code: 'DRIVER_ERROR', message: expect.stringContaining('machine-identity-mismatch') });
    // Its ramdisk did join (the backstop, not the join, stopped it), and the run ended in
    // ensureRamdisk: no machine step of the plan ran (only cleanup), nothing of the host was stored, its disk is untouched.
    expect((await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId: node.nodeId } })).map((c) => c.role)).toContain('ramdisk');
    // (ensureRamdisk is workflow code: its one inventory.refresh is the backstop's, the plan's own inventory.refresh step never ran.)
    const activities = await site.activitiesRun(`node:${node.nodeId}:inspecting:2`);
    expect(activities).toContain('metal.ensureRamdisk.bootEntries');
    expect(activities.filter((name) => name === 'inventory.refresh')).toHaveLength(1);
    expect((await site.t.cp.db.node.findUniqueOrThrow({ where: { id: node.nodeId } })).inventory).toBeNull();
    expect(readFileSync(rogue.machine.diskPath).every((byte) => byte === 0)).toBe(true);
  }, 500_000);
});
