// Flaky BMCs are the norm: a pool of machines whose BMCs fail 20 % of requests (HTTP 500,
// 503, connections reset before or after carrying the request out) and answer every request
// late, and now and then accept a command they do not carry out, goes through its whole
// lifecycle (enroll → inspect → commission → ready) on the real site agent, control plane and
// ramdisk agents. Every machine reaches ready; no BMC operation is recorded failed (so none the
// BMC carried out is reported failed); and each power-on the ledger holds was carried out at
// the BMC exactly once (the BMC's own command log), however many answers were lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine } from '../../agent/emulator/machine';
import type { MetalNodeView } from '../../core/schemas/metal';
import { startE2eSite, type E2eSite } from '../helpers/e2e-site';

// Slow by design (every BMC answer 5 s late): it runs after the rest of the suite, alone
// (vitest.config.ts), and CI runs it in its SQLite pass only; IRONFLOW_E2E_SLOW=0 (set by
// .ci/run for the PostgreSQL re-run) skips it, saying so. The database does nothing here that
// the rest of the suite does not do on both.
const skipReason =
  process.env.IRONFLOW_E2E_SLOW === '0'
    ? 'IRONFLOW_E2E_SLOW=0: the flaky-BMC run (5 s BMC latency) runs in the other pass (CI runs it on SQLite only)'
    : undefined;
if (skipReason) process.stderr.write(`flaky-bmcs: skipped: ${skipReason}\n`);

let site: E2eSite | undefined;

beforeAll(async () => {
  if (!skipReason) site = await startE2eSite('e2e-flaky-bmcs');
}, 120_000);

afterAll(async () => {
  await site?.close();
});

/**
 * The numbers: 20 % of requests failing and every answer 5 s late, and one command in
 * ten accepted and forgotten. One machine's enroll → ready is about twenty BMC requests one
 * after the other (more with the retries), so each machine takes minutes; the machines go in
 * parallel.
 */
const faults = { errorRate: 0.2, latencyMs: 5_000, ignoreRate: 0.1 };
const MACHINES = 4;

describe.skipIf(skipReason !== undefined)('flaky BMCs', () => {
  it(`${MACHINES} machines behind BMCs failing 20 % of requests, 5 s late, reach ready; every power-on is carried out once`, async () => {
    if (!site) throw new Error('the e2e site did not start');
    const nodes: Array<{ nodeId: string; machine: Machine }> = [];
    for (let i = 0; i < MACHINES; i++) {
      const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024 });
      site.fleet.bmc.setFaults(machine.description.id, { ...faults, seed: 14_000 + i });
      const enrolled = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
        tenantId: 'root',
        poolId: site.poolId,
        bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
      });
      nodes.push({ nodeId: enrolled.nodeId, machine });
    }
    const ready = await Promise.all(nodes.map((n) => site!.settle(n.nodeId, 'ready', 480_000)));

    let injected = 0;
    for (const [i, { nodeId, machine }] of nodes.entries()) {
      expect(ready[i]).toMatchObject({ provisionState: 'ready', macs: machine.description.macs, power: 'off', lastError: null });
      const bmc = site.fleet.bmc.get(machine.description.id)!;
      expect(bmc.powerState).toBe('Off');
      const operations = await site.t.cp.db.bmcOperation.findMany({ where: { nodeId } });
      // Nothing recorded failed or unknown: every command the BMC lost the answer to was read back as done.
      expect(operations.map((o) => ({ command: o.command, state: o.state })).filter((o) => o.state !== 'succeeded')).toEqual([]);
      const powerOns = operations.filter((o) => o.command === 'power.set(on)').length;
      expect(powerOns).toBeGreaterThanOrEqual(1);
      // At the BMC: each power-on operation carried out once (a lost answer is read back, not sent again).
      expect(bmc.commands.filter((c) => c === 'reset:On')).toHaveLength(powerOns);
      injected += bmc.commands.filter((c) => c.startsWith('fault:')).length;
    }
    // The faults did happen (the seeds make them happen on every run).
    expect(injected).toBeGreaterThan(0);
  }, 600_000);
});
