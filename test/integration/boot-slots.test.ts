// Boot slots end to end, with the real site agent, emulated machines (firmware, Redfish BMC)
// and their real ramdisk agents, on a control plane that lets one machine of the site boot at
// a time: of two runs started together, one boots while the other queues and says why, and
// the two machines are never up at once; an abort ends a queued run's wait; a slot whose run
// was terminated (no cleanup ran) is reclaimed by the site's boot-lease tick for the run
// queued behind it.
import type { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from '../../agent/emulator/fleet';
import type { Machine } from '../../agent/emulator/machine';
import type { SiteAgent } from '../../agent/site/main';
import type { ProvisionResult, ProvisionStatus } from '../../core/plan';
import { RECLAIM_AFTER_MS } from '../../services/boot-slots/reclaim';
import { abortSignal, statusQuery } from '../../workflows/provision-handles';
import { activeAgent, enrollMachine, startBootSite, until, type BootSite } from '../helpers/boot-site';
import { testConfig } from '../helpers/control-plane';

let site: BootSite;
let agent: SiteAgent;
let fleet: Fleet;

beforeAll(async () => {
  site = await startBootSite('boot-slots-site', { config: await testConfig({ IRONFLOW_BOOT_SLOTS_PER_SITE: '1' }) });
  agent = await site.startAgent();
  await activeAgent(agent);
  fleet = await Fleet.start({ dataDir: `${site.t.config.dataDir}/fleet`, bootServerUrl: () => agent.bootServer?.url, sleepScale: 0.05 });
  await site.t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id: 'boot-slot-e2e',
      version: 1,
      target: 'metal',
      description: 'boot the ramdisk, read the inventory, power off',
      steps: [
        { use: 'metal.ensureRamdisk', timeout: '2m' },
        { use: 'inventory.refresh', on: 'ramdisk' },
        { use: 'power.setPower', on: 'site', with: { action: 'off' } },
      ],
      cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
    },
  });
}, 120_000);

afterAll(async () => {
  await fleet?.close();
  await agent?.stop();
  await site?.t.close();
});

async function enrolledMachine(): Promise<{ machine: Machine; nodeId: string }> {
  const added = await fleet.add({ diskBytes: 1024 * 1024 });
  return { machine: added.machine, nodeId: await enrollMachine(site, added.machine, added.bmc) };
}

async function startRun(nodeId: string): Promise<string> {
  const started = await site.t.root.call<{ workflowId: string }>('POST', '/v1/profiles/boot-slot-e2e/runs', {
    tenantId: 'root',
    nodeId,
    provisionState: 'commissioning',
  });
  return started.workflowId;
}

const handle = (workflowId: string) => site.t.cp.temporal.workflow.getHandle(workflowId);
const statusOf = (workflowId: string): Promise<ProvisionStatus> => handle(workflowId).query(statusQuery);
const queuedForSlot = async (workflowId: string) => /^a boot slot at site /.test((await statusOf(workflowId)).waitingFor ?? '');
const metricsText = async () => (await fetch(`${site.t.cp.url}/metrics`, { headers: { authorization: `Bearer ${site.t.cp.rootCredential.bearer}` } })).text();
const historyOf = (result: ProvisionResult) => result.history.map((h) => `${h.use}:${h.outcome}`);

describe('boot slots: one machine of the site boots at a time', () => {
  it('of two runs started together one boots, the other queues and says so, and the machines are never up at once', async () => {
    const a = await enrolledMachine();
    const b = await enrolledMachine();
    let bothUp = 0;
    const sampler = setInterval(() => {
      if (a.machine.state !== 'off' && b.machine.state !== 'off') bothUp += 1;
    }, 20);
    try {
      const runs = [await startRun(a.nodeId), await startRun(b.nodeId)];
      const queued = await until('one of the runs to queue for the boot slot', async () => {
        for (const [i, id] of runs.entries()) if (await queuedForSlot(id)) return { index: i };
        return undefined;
      });
      const waiting = await statusOf(runs[queued.index] as string);
      expect(waiting.waitingFor).toMatch(/^a boot slot at site site_\w+ \(1 of its machines boot at a time; 0 runs queued ahead of this one\)$/);
      expect(waiting.step?.use).toBe('metal.ensureRamdisk');
      // The queued machine was not touched: no power command, no boot.
      expect([a, b][queued.index]?.machine.bootCount).toBe(0);
      const gauge = await metricsText();
      expect(gauge).toContain(`ironflow_boot_slots{site="${site.siteId}",state="held"} 1`);
      expect(gauge).toContain(`ironflow_boot_slots{site="${site.siteId}",state="queued"} 1`);

      const results = (await Promise.all(runs.map((id) => handle(id).result()))) as ProvisionResult[];
      for (const result of results) {
        expect(historyOf(result)).toEqual([
          'metal.ensureRamdisk:succeeded',
          'inventory.refresh:succeeded',
          'power.setPower:succeeded',
          'boot.cleanUp:succeeded',
        ]);
        expect(result.outputs['steps[0]']).toMatchObject({ booted: true });
      }
      expect(a.machine.bootCount).toBe(1);
      expect(b.machine.bootCount).toBe(1);
      expect(bothUp).toBe(0);
      // Both gave their slot back.
      expect(await site.t.cp.db.bootSlot.count({ where: { siteId: site.siteId } })).toBe(0);
    } finally {
      clearInterval(sampler);
    }
  }, 180_000);

  it('an abort of a queued run ends its wait and gives its place back; the holder goes on', async () => {
    const holder = await enrolledMachine();
    const queued = await enrolledMachine();
    const holding = await startRun(holder.nodeId);
    await until('the first run to hold the slot', async () => (await site.t.cp.db.bootSlot.findUnique({ where: { workflowId: holding } }))?.slot === 0);
    const waiting = await startRun(queued.nodeId);
    await until('the second run to queue', () => queuedForSlot(waiting));
    await handle(waiting).signal(abortSignal, 'test: not this one');
    const failure = await handle(waiting)
      .result()
      .then(
        () => null,
        (err: unknown) => err as WorkflowFailedError,
      );
    expect(failure?.cause?.message).toBe('aborted: test: not this one');
    expect(await site.t.cp.db.bootSlot.findUnique({ where: { workflowId: waiting } })).toBeNull();
    expect(queued.machine.bootCount).toBe(0);
    expect(historyOf((await handle(holding).result()) as ProvisionResult)[0]).toBe('metal.ensureRamdisk:succeeded');
  }, 180_000);

  it('a slot held by a run that was terminated is reclaimed for the run queued behind it', async () => {
    const holder = await enrolledMachine();
    const next = await enrolledMachine();
    const terminated = await startRun(holder.nodeId);
    await until('the first run to hold the slot', async () => (await site.t.cp.db.bootSlot.findUnique({ where: { workflowId: terminated } }))?.slot === 0);
    // Terminated: no cleanup runs, so the slot is never given back by the run.
    await handle(terminated).terminate('test: a run that ends without cleanup');
    const queuedAt = Date.now();
    const waiting = await startRun(next.nodeId);
    await until('the second run to queue behind the terminated one', () => queuedForSlot(waiting));

    const result = (await handle(waiting).result()) as ProvisionResult;
    expect(historyOf(result)[0]).toBe('metal.ensureRamdisk:succeeded');
    // Not before the holder was old enough to be asked about.
    expect(Date.now() - queuedAt).toBeGreaterThan(RECLAIM_AFTER_MS / 2);
    expect(next.machine.bootCount).toBe(1);
    expect(await site.t.cp.db.bootSlot.count({ where: { siteId: site.siteId } })).toBe(0);
    expect(await metricsText()).toMatch(/^ironflow_boot_slots_reclaimed_total 1$/m);
  }, 180_000);
});
