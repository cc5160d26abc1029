// No wait hangs: every wait of the lifecycle has a deadline and says what it waits for. On
// the real site agent and control plane, two emulated machines whose hardware lets them down:
// one whose firmware hangs in POST (its ramdisk never joins), one whose BMC stops answering.
// Each node ends in failed with a lastError naming the wait and the node, within its
// profile's stated time. The timeouts are shortened the way an operator would, through the
// pool's policy.stepTimeouts (profiles/pool-step-timeouts.ts), not a test hook.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine } from '../../agent/emulator/machine';
import type { MetalNodeView } from '../../core/schemas/metal';
import { until } from '../helpers/boot-site';
import { startE2eSite, type E2eSite } from '../helpers/e2e-site';

let site: E2eSite;

/** The shortened timeouts, per attempt: inspect.oob has 3 attempts (2 retries), metal.ensureRamdisk's join wait is not retried. */
const INSPECT_OOB_S = 15;
const ENSURE_RAMDISK_S = 40;
/** What the workflows around a step add (state changes, routing, retry backoff 1 s then 2 s): the slack on the stated time. */
const SLACK_MS = 20_000;

beforeAll(async () => {
  site = await startE2eSite('e2e-wait-deadlines');
  await site.t.root.call('PATCH', `/v1/pools/${site.poolId}`, {
    tenantId: 'root',
    policy: { stepTimeouts: { 'inspect.oob': `${INSPECT_OOB_S}s`, 'metal.ensureRamdisk': `${ENSURE_RAMDISK_S}s` } },
  });
}, 120_000);

afterAll(async () => {
  await site?.close();
});

/** Adds a machine, lets the test break its hardware, and enrolls it by its BMC. */
async function enroll(breakIt: (machine: Machine) => void): Promise<{ nodeId: string; machine: Machine }> {
  const { machine, bmc } = await site.fleet.add({ diskBytes: 8 * 1024 * 1024 });
  breakIt(machine);
  const node = await site.t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
    tenantId: 'root',
    poolId: site.poolId,
    bmc: { driver: 'redfish', address: bmc.address, username: bmc.username, password: bmc.password },
  });
  return { nodeId: node.nodeId, machine };
}

describe('every wait has a deadline', () => {
  it("a pool's stepTimeouts are step names and durations, refused otherwise naming the field", async () => {
    for (const stepTimeouts of [
      { 'metal.ensureRamdisk': '5 minutes' },
      { 'Not A Step': '5m' },
      Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`step.n${i}`, '1m'])),
    ]) {
      const refused = await site.t.root.request<{ error: { code: string; details: { path?: string } } }>('PATCH', `/v1/pools/${site.poolId}`, {
        tenantId: 'root',
        policy: { stepTimeouts },
      });
      expect(refused.status, JSON.stringify(stepTimeouts)).toBe(400);
      expect(refused.body.error.code).toBe('INVALID_INPUT');
      expect(refused.body.error.details.path).toMatch(/^policy\.stepTimeouts/);
    }
  });

  it('a ramdisk that never joins and a BMC that stops answering each end in failed, naming the wait, within the stated time', async () => {
    // A: its firmware hangs in POST, so after metal's PXE boot no ramdisk ever joins.
    const hung = await enroll((machine) => void (machine.hangsInFirmware = true));
    // B: its BMC holds every request open with no answer.
    const silent = await enroll((machine) => site.fleet.bmc.setFaults(machine.description.id, { unresponsive: true }));

    // While A waits, its workflow's status says for what (and the step's progress until when).
    const status = () => site.t.root.call<{ waitingFor: string | null }>('GET', `/v1/metal/nodes/${hung.nodeId}/status?tenantId=root`);
    const waiting = await until(
      'the join wait in the status',
      async () => {
        const s = await status();
        return s.waitingFor?.includes('to join after PXE boot') ? s : undefined;
      },
      60_000,
    );
    expect(waiting.waitingFor).toContain(`the ramdisk of node ${hung.nodeId} to join after PXE boot 1`);

    const [hungFailed, silentFailed] = await Promise.all([
      // Enrolling's inspect.oob passes (the BMC answers), then inspecting's ensureRamdisk waits for the join up to its timeout.
      site.settle(hung.nodeId, 'failed', INSPECT_OOB_S * 1000 + ENSURE_RAMDISK_S * 1000 + SLACK_MS),
      // inspect.oob: three attempts, each ending at its deadline.
      site.settle(silent.nodeId, 'failed', 3 * INSPECT_OOB_S * 1000 + SLACK_MS),
    ]);

    expect(hungFailed).toMatchObject({ failedFrom: 'inspecting', lastError: { code: 'DRIVER_ERROR' } });
    expect(hungFailed.lastError?.message).toMatch(
      new RegExp(
        `^waited \\d+s for the ramdisk of node ${hung.nodeId} to join after PXE boot 1 \\(PXE MACs ${hung.machine.description.macs[0]}\\): it never joined`,
      ),
    );
    // Not retried blindly: one power-on was sent (the wait, not the boot, ran out), and nothing of the boot is left.
    expect(site.fleet.bmc.get(hung.machine.description.id)!.commands.filter((c) => c === 'reset:On')).toHaveLength(1);
    expect(site.bootEntries().filter((e) => e.nodeId === hung.nodeId)).toEqual([]);
    expect(await site.liveTokens(hung.nodeId)).toBe(0);

    expect(silentFailed).toMatchObject({ failedFrom: 'enrolling', lastError: { code: 'DRIVER_ERROR' } });
    expect(silentFailed.lastError?.message).toMatch(
      /^redfish BMC http:\/\/127\.0\.0\.1:\d+: no answer to inspect within \d+s \(the step's deadline\): the BMC stopped answering$/,
    );
    expect(site.fleet.bmc.get(silent.machine.description.id)!.commands).toEqual([]);
    site.fleet.bmc.setFaults(silent.machine.description.id, null);
  }, 150_000);
});
