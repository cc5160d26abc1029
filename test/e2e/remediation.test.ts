// The two shipped remediation profiles end to end, with nothing fake but the hardware: two
// emulated machines (one with two emulated GPUs) enrolled by their BMC, deployed, and their
// installed OS running the REAL node agent. remediate-reboot power-cycles through the site
// agent and completes when the node agent's session opens again after the reboot (the same
// agentJoined a join delivers); remediate-gpu-reset runs gpu.reset on the node agent, which
// finds the machine's nvidia-smi on its OS's PATH (the emulated GPU's tool records the
// reset), then DCGM level 1; on the machine without GPUs it fails UNSUPPORTED naming the host.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuResetLog, osRoot } from '../../agent/emulator/installed-os';
import type { Machine } from '../../agent/emulator/machine';
import type { MetalNodeView } from '../../core/schemas/metal';
import { until } from '../helpers/boot-site';
import { startE2eSite, type E2eSite } from '../helpers/e2e-site';

let site: E2eSite;
const nodes: Record<'gpu' | 'plain', { nodeId: string; machine: Machine }> = {} as never;

const hostConfig = { hugepages: { size: '2M', count: 64 }, 'kernel-modules': { load: ['vfio_pci'] }, cpu: { governor: 'performance' } };

const bootId = (machine: Machine) => readFileSync(path.join(osRoot(machine), 'proc/sys/kernel/random/boot_id'), 'utf8').trim();

/** Runs a shipped profile on a node (POST /v1/profiles/:id/runs) and waits until its workflow ends. */
async function runProfile(profileId: string, nodeId: string): Promise<{ workflowId: string; status: string; failure: string }> {
  const started = await site.t.root.call<{ workflowId: string }>('POST', `/v1/profiles/${profileId}/runs`, {
    tenantId: 'root',
    nodeId,
    provisionState: 'remediating',
  });
  const handle = site.t.cp.temporal.workflow.getHandle(started.workflowId);
  const status = await until(
    `${started.workflowId} to end`,
    async () => {
      const name = (await handle.describe()).status.name;
      return name === 'RUNNING' ? undefined : name;
    },
    90_000,
  );
  let failure = '';
  if (status === 'FAILED') {
    await handle.result().catch((error: unknown) => {
      for (let e = error as (Error & { cause?: unknown }) | undefined; e; e = e.cause as typeof e) failure += ` ${e.message}`;
    });
  }
  return { workflowId: started.workflowId, status, failure };
}

beforeAll(async () => {
  site = await startE2eSite('e2e-remediation');
  for (const [kind, gpus] of [
    ['gpu', 2],
    ['plain', 0],
  ] as const) {
    const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024, gpus });
    const enrolled = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: site.poolId,
      bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
    });
    nodes[kind] = { nodeId: enrolled.nodeId, machine };
  }
  await Promise.all(Object.values(nodes).map((n) => site.settle(n.nodeId, 'ready', 150_000)));
  await site.registerImage('e2e-remediation-os@1', randomBytes(512 * 1024 + 3));
  // The helper's deploy profile (userdata.render … boot.kexec awaiting the join), with host config for the node agent to apply.
  await site.deployProfile('e2e-remediation-base', 'e2e-remediation-os@1');
  const base = await site.t.root.call<{ document: Record<string, unknown> }>('GET', '/v1/profiles/e2e-remediation-base?tenantId=root');
  await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: { ...base.document, id: 'e2e-remediation-host', version: 1, hostConfig } });
  for (const n of Object.values(nodes)) await site.verb(n.nodeId, 'deploy', { profileId: 'e2e-remediation-host', profileVersion: 1 });
  await Promise.all(Object.values(nodes).map((n) => site.settle(n.nodeId, 'deployed', 150_000)));
}, 300_000);

afterAll(async () => {
  await site?.close();
});

describe('remediation profiles against the real agents', () => {
  it('the installed OS’s node agent reads its machine from its root: inventory.refresh on the node answers the DMI product UUID (checked against the enrolled one) and the GPUs', async () => {
    const { nodeId, machine } = nodes.gpu;
    const inventory = (uuid: string) => ({
      id: `e2e-node-inventory-${uuid.slice(0, 8)}`,
      version: 1,
      target: 'metal',
      steps: [{ use: 'inventory.refresh', on: 'node', with: { expect: { productUuid: uuid } } }],
      cleanup: [],
    });
    await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: inventory(machine.description.uuid) });
    const run = await runProfile(inventory(machine.description.uuid).id, nodeId);
    expect(run.status).toBe('COMPLETED');
    const result = (await site.t.cp.temporal.workflow.getHandle(run.workflowId).result()) as {
      outputs: Record<string, { sections: { system: { productUuid: string | null; cpus: number }; gpus: unknown[] } }>;
    };
    expect(result.outputs['steps[0]']?.sections.system).toMatchObject({ productUuid: machine.description.uuid, cpus: 4 });
    expect(result.outputs['steps[0]']?.sections.gpus).toEqual(machine.hardware().gpus.map((g) => ({ model: 'Emulated GPU', uuid: g.uuid })));

    // Another machine's UUID: the node agent refuses, as the ramdisk does.
    const other = nodes.plain.machine.description.uuid;
    await site.t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: inventory(other) });
    const wrong = await runProfile(inventory(other).id, nodeId);
    expect(wrong.status).toBe('FAILED');
    expect(wrong.failure).toContain('product UUID is not the enrolled one');
  });

  it('the node agent applies the deploy’s host config under its OS root: files and sysctl drop-in written, the systemd unit pending (systemd does not run it)', async () => {
    const { nodeId, machine } = nodes.plain;
    const root = osRoot(machine);
    const state = await until(
      'the host state at the node agent',
      () => {
        const file = path.join(machine.osDir, 'host-state.json');
        const parsed = existsSync(file)
          ? (JSON.parse(readFileSync(file, 'utf8')) as { profile: string; units: Array<{ name: string; state: string }> })
          : undefined;
        return parsed?.profile === 'e2e-remediation-host@1' ? parsed : undefined;
      },
      30_000,
    );
    expect(state.units.map((u) => `${u.name}:${u.state}`)).toEqual(['hugepages:converged', 'kernel-modules:converged', 'cpu:pending']);
    expect(readFileSync(path.join(root, 'etc/sysctl.d/90-ironflow-hugepages.conf'), 'utf8')).toMatch(/^vm\.nr_hugepages = 64$/m);
    expect(readFileSync(path.join(root, 'etc/modules-load.d/90-ironflow.conf'), 'utf8')).toMatch(/^vfio_pci$/m);
    expect(existsSync(path.join(root, 'etc/systemd/system/ironflow-cpu-governor.service'))).toBe(true);
    expect((await site.t.cp.db.node.findUniqueOrThrow({ where: { id: nodeId } })).hostSpec).toMatchObject({ profile: 'e2e-remediation-host@1' });
  });

  it('remediate-reboot: one power cycle at the BMC, the node agent’s session opens again after the reboot (no new join), the run completes and the node stays deployed', async () => {
    const { nodeId, machine } = nodes.plain;
    const bmc = site.fleet.bmc.get(machine.description.id)!;
    const commandsBefore = bmc.commands.length;
    const bootsBefore = machine.bootCount;
    const bootBefore = bootId(machine);
    const certificatesBefore = await site.t.cp.db.nodeCertificate.count({ where: { nodeId, role: 'node' } });

    const run = await runProfile('remediate-reboot', nodeId);
    expect(run).toMatchObject({ status: 'COMPLETED' });
    expect(bmc.commands.slice(commandsBefore).filter((c) => c.startsWith('reset:'))).toEqual(['reset:PowerCycle']);
    expect(machine.bootCount).toBe(bootsBefore + 1);
    expect(machine.state).toBe('installed-os');
    // The agent came back on a new boot with its stored identity: its session opened, no join.
    expect(bootId(machine)).not.toBe(bootBefore);
    const reconnected = await until(
      'node.agent.reconnected for the run',
      async () => {
        const events = await site.t.cp.db.event.findMany({ where: { subjectId: nodeId, type: 'node.agent.reconnected' } });
        return events.find((e) => (e.data as { workflowIds: string[] }).workflowIds.includes(run.workflowId));
      },
      20_000,
    );
    expect(reconnected.data).toMatchObject({ role: 'node', bootId: bootId(machine) });
    expect(await site.t.cp.db.nodeCertificate.count({ where: { nodeId, role: 'node' } })).toBe(certificatesBefore);
    expect((await site.activitiesRun(run.workflowId)).filter((a) => a === 'power.setPower')).toHaveLength(1);

    const node = await site.settle(nodeId, 'deployed');
    expect(node).toMatchObject({ power: 'on', maintenance: false, lastError: null });
    expect(await site.liveTokens(nodeId)).toBe(0);
    expect(site.bootEntries().filter((e) => e.nodeId === nodeId)).toEqual([]);
  }, 120_000);

  it('remediate-gpu-reset: the node agent resets each GPU with the machine’s nvidia-smi (recorded by the emulated tool), then DCGM level 1 passes', async () => {
    const { nodeId, machine } = nodes.gpu;
    const run = await runProfile('remediate-gpu-reset', nodeId);
    expect(run).toMatchObject({ status: 'COMPLETED' });
    const uuids = machine.hardware().gpus.map((g) => g.uuid);
    expect(readFileSync(gpuResetLog(machine), 'utf8')).toBe(uuids.map((uuid, i) => `reset ${i} ${uuid}\n`).join(''));
    expect((await site.activitiesRun(run.workflowId)).filter((a) => a === 'gpu.reset' || a === 'diag.dcgm')).toEqual(['gpu.reset', 'diag.dcgm']);
    expect(await site.settle(nodeId, 'deployed')).toMatchObject({ maintenance: false, lastError: null });
  }, 120_000);

  it('remediate-gpu-reset on a machine without nvidia-smi fails UNSUPPORTED naming the host; nothing is reset and the node stays deployed', async () => {
    const { nodeId, machine } = nodes.plain;
    const run = await runProfile('remediate-gpu-reset', nodeId);
    expect(run.status).toBe('FAILED');
    expect(run.failure).toMatch(/gpu\.reset: .* has no nvidia-smi on its PATH/);
    expect(run.failure).toContain(nodeId.replace(/_/g, '-'));
    expect(existsSync(gpuResetLog(machine))).toBe(false);
    expect((await site.activitiesRun(run.workflowId)).filter((a) => a === 'gpu.reset')).toHaveLength(1); // UNSUPPORTED is not retried
    expect(await site.settle(nodeId, 'deployed')).toMatchObject({ maintenance: false });
  }, 120_000);
});
