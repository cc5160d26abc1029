// Retire and release wipes end to end against the real agents (docs/wiping.md): emulated
// machines whose drives declare what they can erase (an NVMe SED; NVMe with Format only)
// boot the REAL ramdisk, which learns each drive's abilities from sysfs and the drive tools
// and erases the disk file for real. Retire on a SED crypto-erases and ends retired (identity
// revoked, BMC credentials forgotten, nothing left on the site agent); retire on a drive
// without crypto-erase fails naming the drive and the fix under the default policy, stays
// failed (no workflow starts by itself), and after the operator allows a fallback, recover
// retires it with that fallback; undeploy --wipe secure-erase wipes a capable drive to ready,
// undeploy --wipe crypto-erase on a drive without it fails UNSUPPORTED naming the drive;
// an agentless pool retires by metal-retire-oob, which cannot wipe and says so in the docs.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatedDiskSpec } from '../../agent/emulator/emulated-disk';
import type { Machine } from '../../agent/emulator/machine';
import type { MetalNodeView } from '../../core/schemas/metal';
import { until } from '../helpers/boot-site';
import { sha, startE2eSite, type E2eSite } from '../helpers/e2e-site';

const MIB = 1024 * 1024;
const BLOCK = 4096;
let site: E2eSite;
/** A pool with the default retire policy (crypto-erase, fail), for the drive the operator later gives a fallback. */
let strictPoolId: string;
const osImage = randomBytes(2 * MIB + 77);
type Enrolled = { nodeId: string; machine: Machine };
let machines: Promise<{ sed: Enrolled; formatOnly: Enrolled; deployA: Enrolled; deployB: Enrolled; agentless: Enrolled }>;

const SED: EmulatedDiskSpec = { transport: 'nvme', erase: ['crypto-erase', 'secure-erase'] };
const FORMAT_ONLY: EmulatedDiskSpec = { transport: 'nvme', erase: ['secure-erase'] };

async function enroll(poolId: string, disk: EmulatedDiskSpec): Promise<Enrolled> {
  const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * MIB, disk });
  const node = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
    tenantId: 'root',
    poolId,
    bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
  });
  return { nodeId: node.nodeId, machine };
}

/** Data on the disk before the wipe (the machine is off: the disk file is the drive's media). */
function fillDisk(machine: Machine): Buffer {
  const data = randomBytes(machine.description.diskBytes);
  writeFileSync(machine.diskPath, data);
  return data;
}

/** How many 4 KiB blocks of the disk still hold what `before` held there (zero blocks aside). */
function survivingBlocks(machine: Machine, before: Buffer): number {
  const now = readFileSync(machine.diskPath);
  let surviving = 0;
  for (let at = 0; at < now.length; at += BLOCK) {
    const block = now.subarray(at, at + BLOCK);
    if (block.some((b) => b !== 0) && block.equals(before.subarray(at, at + BLOCK))) surviving += 1;
  }
  return surviving;
}

/** The disk.wipe result of the node's last retiring workflow, as the ramdisk signed it. */
async function wipeResult(nodeId: string): Promise<unknown> {
  const seq = (id: string) => Number(id.split(':').at(-1));
  const retiring = (await site.stateWorkflows(nodeId))
    .filter((id) => id.includes(':retiring:'))
    .sort((a, b) => seq(a) - seq(b))
    .at(-1) as string;
  const { outputs } = (await site.t.cp.temporal.workflow.getHandle(retiring).result()) as { outputs: Record<string, unknown> };
  return Object.values(outputs).find((o) => typeof o === 'object' && o !== null && 'attestation' in o && 'disks' in o);
}

const isZero = (machine: Machine) => readFileSync(machine.diskPath).every((b) => b === 0);
const bmcOf = (machine: Machine) => site.fleet.bmc.get(machine.description.id);
const row = (nodeId: string) => site.t.cp.db.node.findUniqueOrThrow({ where: { id: nodeId } });
const eventTypes = (nodeId: string, types: string[]) =>
  until(
    `events ${types.join(', ')} of ${nodeId}`,
    async () => {
      const seen = (await site.t.cp.db.event.findMany({ where: { subjectId: nodeId } })).map((e) => e.type);
      return types.every((t) => seen.includes(t)) ? seen : undefined;
    },
    30_000,
  );

async function expectRetired(nodeId: string, machine: Machine): Promise<void> {
  const node = await row(nodeId);
  expect(node).toMatchObject({ provisionState: 'retired', bmcCredentialsRef: null, power: 'off', workflowId: null });
  // Identity revoked: no certificate of the node is still good, no token left; the site agent keeps no boot entry.
  expect(await site.t.cp.db.nodeCertificate.count({ where: { nodeId, revokedAt: null } })).toBe(0);
  expect(await site.t.cp.db.nodeCertificate.count({ where: { nodeId } })).toBeGreaterThan(0);
  expect(await site.liveTokens(nodeId)).toBe(0);
  expect(site.bootEntries().filter((e) => e.nodeId === nodeId)).toEqual([]);
  expect(bmcOf(machine)?.powerState).toBe('Off');
  expect(machine.state).toBe('off');
  await eventTypes(nodeId, ['node.identity.revoked', 'node.provision.retired']);
}

beforeAll(async () => {
  site = await startE2eSite('e2e-retire-wipes');
  strictPoolId = (
    await site.t.root.call<{ id: string }>('POST', '/v1/pools', {
      tenantId: 'root',
      siteId: site.siteId,
      class: 'e2e-retire-strict',
      policy: { allowEmulatedMachines: true },
    })
  ).id;
  const agentlessPoolId = (
    await site.t.root.call<{ id: string }>('POST', '/v1/pools', {
      tenantId: 'root',
      siteId: site.siteId,
      class: 'e2e-retire-oob',
      policy: { agent: 'none', allowEmulatedMachines: true },
    })
  ).id;
  await site.registerImage('e2e-wipes-os@1', osImage);
  await site.deployProfile('e2e-wipes-host', 'e2e-wipes-os@1');
  // All four machines enroll to ready at once; each test waits for the ones it needs.
  machines = (async () => {
    const [sed, formatOnly, deployA, deployB, agentless] = await Promise.all([
      enroll(site.poolId, SED),
      enroll(strictPoolId, FORMAT_ONLY),
      enroll(site.poolId, FORMAT_ONLY),
      enroll(site.poolId, FORMAT_ONLY),
      enroll(agentlessPoolId, SED),
    ]);
    await Promise.all([sed, formatOnly, deployA, deployB, agentless].map((m) => site.settle(m.nodeId, 'ready', 150_000)));
    return { sed, formatOnly, deployA, deployB, agentless };
  })();
  machines.catch(() => undefined); // awaited by each test
}, 120_000);

afterAll(async () => {
  await site?.close();
});

describe('retire and release wipes on emulated drives, real agents', () => {
  it('retire on a self-encrypting NVMe drive crypto-erases (the bytes become noise) and ends retired with nothing left', async () => {
    const { sed } = await machines;
    const before = fillDisk(sed.machine);
    expect((await site.verb(sed.nodeId, 'retire')).provisionState).toBe('retiring');
    await site.settle(sed.nodeId, 'retired', 120_000);
    // The drive ran its cryptographic erase: every block changed, and it is noise, not zeros.
    expect(sed.machine.disk.erases).toEqual(['crypto-erase']);
    expect(survivingBlocks(sed.machine, before)).toBe(0);
    expect(isZero(sed.machine)).toBe(false);
    await expectRetired(sed.nodeId, sed.machine);
    expect(await site.stateWorkflows(sed.nodeId)).toHaveLength(4); // enroll, inspect, commission, retire
  }, 200_000);

  it('retire on a drive without crypto-erase fails naming the drive and the fix, stays failed; with a fallback allowed, recover retires it by secure-erase', async () => {
    const { formatOnly } = await machines;
    const before = fillDisk(formatOnly.machine);
    await site.verb(formatOnly.nodeId, 'retire');
    const failed = await site.settle(formatOnly.nodeId, 'failed', 120_000);
    expect(failed).toMatchObject({ failedFrom: 'retiring', maintenance: true, lastError: { code: 'UNSUPPORTED' } });
    const message = (failed.lastError as { message: string }).message;
    expect(message).toContain(`disk nvme0n1 (${formatOnly.machine.diskPath}, Ironflow Emulated NVMe) cannot crypto-erase`);
    expect(message).toContain('FNA bit 2 clear');
    expect(message).toContain("set the pool's policy.retireWipe.fallback");
    // Decided before the drive was touched: the data is all there.
    expect(formatOnly.machine.disk.erases).toEqual([]);
    expect(readFileSync(formatOnly.machine.diskPath).equals(before)).toBe(true);
    // No loop: nothing starts another retire by itself.
    const workflows = (await site.stateWorkflows(formatOnly.nodeId)).length;
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await site.stateWorkflows(formatOnly.nodeId)).toHaveLength(workflows);
    expect(await site.get(formatOnly.nodeId)).toMatchObject({ provisionState: 'failed', workflowId: null });

    // The operator allows a fallback; recover (failedFrom retiring → retiring, spec 004) retires with it.
    await site.t.root.call('PATCH', `/v1/pools/${strictPoolId}`, {
      tenantId: 'root',
      policy: { retireWipe: { mode: 'crypto-erase', fallback: 'secure-erase' } },
    });
    expect((await site.verb(formatOnly.nodeId, 'recover')).provisionState).toBe('retiring');
    await site.settle(formatOnly.nodeId, 'retired', 120_000);
    expect(formatOnly.machine.disk.erases).toEqual(['secure-erase']);
    expect(isZero(formatOnly.machine)).toBe(true);
    // The signed result says which mode the disk got and why (the lifecycle verified it before retiring the node).
    expect(await wipeResult(formatOnly.nodeId)).toMatchObject({
      mode: 'crypto-erase',
      disks: [
        { name: 'nvme0n1', mode: 'secure-erase', readBack: true, fallbackFrom: { mode: 'crypto-erase', reason: expect.stringContaining('FNA bit 2 clear') } },
      ],
      attestation: expect.anything(),
    });
    expect(await site.t.cp.db.event.count({ where: { subjectId: formatOnly.nodeId, type: 'security.attestation.refused' } })).toBe(0);
    await expectRetired(formatOnly.nodeId, formatOnly.machine);
    expect(await site.stateWorkflows(formatOnly.nodeId)).toHaveLength(workflows + 1);
  }, 200_000);

  it('a policy whose fallback is not weaker than its mode is refused', async () => {
    const refused = await site.t.root.request('PATCH', `/v1/pools/${strictPoolId}`, {
      tenantId: 'root',
      policy: { retireWipe: { mode: 'quick', fallback: 'secure-erase' } },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('retireWipe');
  });

  it('undeploy --wipe secure-erase formats a capable drive back to ready; --wipe crypto-erase on a drive without it fails UNSUPPORTED naming the drive', async () => {
    const { deployA, deployB } = await machines;
    for (const { nodeId } of [deployA, deployB]) await site.verb(nodeId, 'deploy', { profileId: 'e2e-wipes-host', profileVersion: 1 });
    await Promise.all([deployA, deployB].map(({ nodeId }) => site.settle(nodeId, 'deployed', 120_000)));
    expect(sha(readFileSync(deployB.machine.diskPath).subarray(0, osImage.length))).toBe(sha(osImage));

    expect((await site.verb(deployA.nodeId, 'undeploy', { wipe: 'secure-erase' })).releaseWipe).toBe('secure-erase');
    expect((await site.verb(deployB.nodeId, 'undeploy', { wipe: 'crypto-erase' })).releaseWipe).toBe('crypto-erase');
    await site.settle(deployA.nodeId, 'ready', 120_000);
    expect(deployA.machine.disk.erases).toEqual(['secure-erase']);
    expect(isZero(deployA.machine)).toBe(true);
    // The user data (a config drive on the disk) went with the erase.
    expect(() => readFileSync(deployA.machine.userDataPath)).toThrow();

    const failed = await site.settle(deployB.nodeId, 'failed', 120_000);
    expect(failed).toMatchObject({ failedFrom: 'releasing', lastError: { code: 'UNSUPPORTED' } });
    expect((failed.lastError as { message: string }).message).toContain('disk nvme0n1');
    expect((failed.lastError as { message: string }).message).toContain('cannot crypto-erase');
    expect(deployB.machine.disk.erases).toEqual([]);
    expect(sha(readFileSync(deployB.machine.diskPath).subarray(0, osImage.length))).toBe(sha(osImage));
    expect(site.bootEntries().filter((e) => e.nodeId === deployB.nodeId)).toEqual([]);
  }, 300_000);

  it('metal-retire-oob on an agentless pool: off, identity revoked, credentials forgotten; nothing runs on the machine, so nothing is wiped', async () => {
    const { agentless } = await machines;
    const before = fillDisk(agentless.machine);
    await site.verb(agentless.nodeId, 'retire');
    const retired = await site.settle(agentless.nodeId, 'retired', 60_000);
    expect(retired).toMatchObject({ power: 'off', lastError: null });
    expect(await row(agentless.nodeId)).toMatchObject({ bmcCredentialsRef: null });
    expect(bmcOf(agentless.machine)?.powerState).toBe('Off');
    expect(agentless.machine.bootCount).toBe(0);
    expect(agentless.machine.disk.erases).toEqual([]);
    expect(readFileSync(agentless.machine.diskPath).equals(before)).toBe(true);
    expect(await site.liveTokens(agentless.nodeId)).toBe(0);
    expect(site.bootEntries().filter((e) => e.nodeId === agentless.nodeId)).toEqual([]);
    await eventTypes(agentless.nodeId, ['node.identity.revoked', 'node.provision.retired']);
  }, 120_000);
});
