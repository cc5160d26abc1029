// Flaky BMCs: the emulated BMC's fault injection (agent/emulator/bmc-faults.ts) against the
// Redfish driver wrapped by reliableDriver (agent/bmc/reliable.ts). Commands survive 500s,
// 503s, dropped connections, lost answers and commands accepted but not carried out, each
// carried out exactly once (counted in the BMC's command log); a cycle whose answer was lost
// is sent again only when the BMC proves it was not carried out; a BMC that stops answering
// fails the call at the deadline, saying so. Timing is scaled down (ms, not s): the logic is
// the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBmcDriver, type BmcDriver } from '../../agent/bmc';
import { runBmcCommand } from '../../agent/bmc/commands';
import { reliableDriver, type ReliabilityOptions } from '../../agent/bmc/reliable';
import { BmcFaults } from '../../agent/emulator/bmc-faults';
import { RedfishBmcHost, type EmulatedMachineSpec } from '../../agent/emulator/redfish-bmc';
import { IronflowError } from '../../core/errors';
import { startSharedLedger } from '../helpers/shared-bmc-ledger';

let host: RedfishBmcHost;
let sequence = 0;
beforeAll(async () => {
  host = await RedfishBmcHost.start();
});
afterAll(async () => {
  await host?.close();
});

const fast: Omit<ReliabilityOptions, 'deadline'> = { initialBackoffMs: 5, maxBackoffMs: 40, verifyWindowMs: 150, pollMs: 20 };

function machine(spec: Partial<EmulatedMachineSpec> = {}): { id: string; driver: (options?: Partial<ReliabilityOptions>) => BmcDriver } {
  const id = `flaky-${++sequence}`;
  host.add({
    id,
    uuid: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    macs: ['52:54:00:00:aa:01'],
    username: 'root',
    password: `pw-${id}`,
    ...spec,
  });
  return {
    id,
    driver: (options = {}) =>
      reliableDriver(
        createBmcDriver({ driver: 'redfish', address: host.url, systemId: id }, { username: 'root', password: `pw-${id}` }, { timeoutMs: 2_000 }),
        {
          ...fast,
          deadline: Date.now() + 60_000,
          ...options,
        },
      ),
  };
}

const carriedOut = (id: string, command: string) => host.get(id)!.commands.filter((c) => c === command).length;
const faultsOf = (id: string) => host.get(id)!.commands.filter((c) => c.startsWith('fault:'));

describe('flaky BMCs', () => {
  it('draws the same faults from the same seed, and different ones per machine', () => {
    const draw = (machineId: string) => {
      const faults = new BmcFaults({ errorRate: 0.2, ignoreRate: 0.2, latencyMs: 5, jitterMs: 10, seed: 42 }, machineId);
      return Array.from({ length: 200 }, (_, i) => faults.next(i % 3 === 0));
    };
    expect(draw('m1')).toEqual(draw('m1'));
    expect(draw('m1')).not.toEqual(draw('m2'));
    const errors = draw('m1').filter((d) => d.error !== null).length;
    // 20 % of 200, give or take what a fair draw gives.
    expect(errors).toBeGreaterThan(20);
    expect(errors).toBeLessThan(60);
    expect(() => new BmcFaults({ errorRate: 1.5 }, 'm1')).toThrow(/errorRate/);
  });

  it('carries out every command exactly once under 30 % errors (500, 503, resets, lost answers) and 30 % ignored commands', async () => {
    const { id, driver } = machine({ powerState: 'On' });
    host.setFaults(id, { errorRate: 0.3, ignoreRate: 0.3, latencyMs: 2, jitterMs: 5, seed: 7 });
    const bmc = driver();
    for (let i = 0; i < 12; i++) await bmc.power.set('cycle');
    expect(carriedOut(id, 'reset:PowerCycle')).toBe(12);
    await bmc.power.set('off');
    expect(host.get(id)!.powerState).toBe('Off');
    await bmc.management.setBoot({ device: 'pxe', persistent: false });
    expect(host.get(id)!.bootTarget).toBe('Pxe');
    await bmc.power.set('cycle');
    expect(carriedOut(id, 'reset:PowerCycle')).toBe(13);
    expect(host.get(id)!.powerState).toBe('On');
    expect((await bmc.inspect()).systemUuid).toBe(host.get(id)!.spec.uuid);
    // The faults happened, each kind of them (the seed makes this run the same every time).
    const faults = faultsOf(id).map((f) => f.split(' ')[0]);
    for (const kind of ['fault:500', 'fault:503', 'fault:reset', 'fault:lost-answer', 'fault:ignored']) expect(faults).toContain(kind);
    await bmc.close();
  }, 60_000);

  it('a cycle whose answer was lost is not sent again: LastResetTime shows it was carried out', async () => {
    const { id, driver } = machine({ powerState: 'On' });
    host.setFaults(id, { errorRate: 1, errorKinds: ['lost-answer'], commandsOnly: true });
    const bmc = driver();
    const before = host.get(id)!.lastResetTime;
    await bmc.power.set('cycle');
    expect(carriedOut(id, 'reset:PowerCycle')).toBe(1);
    expect(faultsOf(id)).toEqual(['fault:lost-answer POST Systems/' + id + '/Actions/ComputerSystem.Reset']);
    expect(host.get(id)!.lastResetTime).not.toBe(before);
    await bmc.close();
  });

  it("a cycle the BMC never carries out is not carried out twice across the step's retries, however its deadline falls", async () => {
    const { id, driver } = machine({ powerState: 'On' });
    // The ledger the site agent keeps its operations in (the control plane's), one step attempt each.
    const shared = await startSharedLedger();
    try {
      // Every reset's connection drops before the BMC carries it out.
      host.setFaults(id, { errorRate: 1, errorKinds: ['reset'], commandsOnly: true });
      const first = driver({ deadline: Date.now() + 1_000 });
      const error = (await runBmcCommand(shared.ledger(), first, shared.operationId('steps.0/power.set.cycle'), { kind: 'power.set', action: 'cycle' }).catch(
        (e: unknown) => e,
      )) as IronflowError;
      await first.close();
      expect(carriedOut(id, 'reset:PowerCycle')).toBe(0);
      // Read back as not carried out between tries: a known outcome. A deadline during a send or its read-back: unknown.
      const known = /read back as not carried out/.test(error.message) && error.details.outcomeUnknown === undefined;
      expect(known || error.details.outcomeUnknown === true, error.message).toBe(true);
      // The step's retry, the BMC healthy again: sent once when the outcome was known, never when it was not.
      host.setFaults(id, null);
      const retry = driver();
      const outcome = await runBmcCommand(shared.ledger(), retry, shared.operationId('steps.0/power.set.cycle'), { kind: 'power.set', action: 'cycle' });
      await retry.close();
      expect(outcome.reused).toBe(!known);
      expect(carriedOut(id, 'reset:PowerCycle')).toBe(known ? 1 : 0);
    } finally {
      await shared.close();
    }
  }, 90_000);

  it('on a BMC without LastResetTime, a lost answer to a cycle of a running machine fails as unknown and is not sent again', async () => {
    const { id, driver } = machine({ powerState: 'On', reportsLastResetTime: false });
    const bmc = driver();
    expect(await bmc.power.get()).toBe('on');
    host.setFaults(id, { errorRate: 1, errorKinds: ['lost-answer'], commandsOnly: true });
    const error = (await bmc.power.set('cycle').catch((e: unknown) => e)) as IronflowError;
    host.setFaults(id, null);
    expect(error).toBeInstanceOf(IronflowError);
    expect(error.details.outcomeUnknown).toBe(true);
    expect(error.message).toMatch(/cannot be told: not sent again/);
    expect(carriedOut(id, 'reset:PowerCycle')).toBe(1);
    await bmc.close();
    // A refusal (the BMC answered 503: not carried out) is sent again, until the deadline.
    host.setFaults(id, { errorRate: 1, errorKinds: ['503'], commandsOnly: true });
    const refusing = driver({ deadline: Date.now() + 500 });
    // It ends at the deadline: between tries (the last refusal) or during one.
    await expect(refusing.power.set('cycle')).rejects.toThrow(/HTTP 503.*gave up after \d+ tries|the step's deadline came after/);
    host.setFaults(id, null);
    await refusing.close();
    expect(carriedOut(id, 'reset:PowerCycle')).toBe(1);
    expect(faultsOf(id).filter((f) => f.startsWith('fault:503 POST')).length).toBeGreaterThan(1);
  });

  it('a BMC that stops answering fails the call at the deadline, naming what it waited for', async () => {
    const { id, driver } = machine({ powerState: 'Off' });
    host.setFaults(id, { unresponsive: true });
    const bmc = driver({ deadline: Date.now() + 1_500 });
    const error = (await bmc.power.set('cycle').catch((e: unknown) => e)) as IronflowError;
    expect(error).toBeInstanceOf(IronflowError);
    expect(error.code).toBe('DRIVER_ERROR');
    expect(error.message).toMatch(/no answer to power\.status within .*the step's deadline.*stopped answering/);
    expect(carriedOut(id, 'reset:PowerCycle')).toBe(0);
    host.setFaults(id, null);
    await bmc.close();
    // One that answers, too slowly for the deadline, is told apart.
    host.setFaults(id, { latencyMs: 400 });
    const slow = driver({ deadline: Date.now() + 1_000 });
    const slowError = (await slow.power.set('cycle').catch((e: unknown) => e)) as Error;
    expect(slowError.message).toMatch(
      /the step's deadline came after \d+m?s, \d+m?s into power\.\w+(\(cycle\))?: the BMC answers, but too slowly or with too many errors/,
    );
    host.setFaults(id, null);
    await slow.close();
  });

  it('gives up on a BMC that keeps failing at the deadline, with its last error and the tries', async () => {
    const { id, driver } = machine();
    host.setFaults(id, { errorRate: 1, errorKinds: ['503'] });
    // Pauses of 300 ms: the last 503 is in well before the deadline even on a loaded machine (with
    // pauses of 20-60 ms, a 503 answered late once met the deadline in flight, the other message).
    const bmc = driver({ deadline: Date.now() + 1_500, initialBackoffMs: 300, maxBackoffMs: 300, random: () => 0.5 });
    const error = (await bmc.power.get().catch((e: unknown) => e)) as IronflowError;
    expect(error.message).toMatch(/HTTP 503.*gave up after \d+ tries in .*the step's deadline/);
    expect(error.details.attempts).toBeGreaterThan(1);
    // A refusal that is not transient is not retried.
    host.setFaults(id, null);
    const wrong = reliableDriver(createBmcDriver({ driver: 'redfish', address: host.url, systemId: id }, { username: 'root', password: 'wrong-password' }), {
      ...fast,
      deadline: Date.now() + 10_000,
    });
    const before = host.get(id)!.requests;
    await expect(wrong.power.get()).rejects.toThrow(/HTTP 401/);
    expect(host.get(id)!.requests - before).toBe(1);
    await wrong.close();
    await bmc.close();
  });
});
