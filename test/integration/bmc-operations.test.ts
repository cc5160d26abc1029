// The operation ledger: a BMC command an agent already ran is reused, not sent again, when
// its step is retried, by the same agent or another of the site's (the ledger the control
// plane keeps for them, agent/site/remote-operation-ledger.ts). Against the emulated BMC,
// counting what reached it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBmcDriver, type BmcDriver } from '../../agent/bmc';
import { runBmcCommand } from '../../agent/bmc/commands';
import { RedfishBmcHost, type BootEvent } from '../../agent/emulator/redfish-bmc';
import { IronflowError } from '../../core/errors';
import { callCountsOf, callsPerMachine } from '../../bench/lib/call-counts';
import { metricsRegistry } from '../../services/metrics/registry';
import { startSharedLedger, type SharedLedgerFixture } from '../helpers/shared-bmc-ledger';

const machine = { id: 'm1', uuid: '11111111-2222-4333-8444-555555555555', macs: ['52:54:00:00:00:01'], username: 'root', password: 'ledger-pw-1' };

let host: RedfishBmcHost;
let driver: BmcDriver;
let shared: SharedLedgerFixture;
const boots: BootEvent[] = [];
beforeAll(async () => {
  shared = await startSharedLedger();
  host = await RedfishBmcHost.start();
  host.add({ ...machine, powerState: 'On' });
  host.on('boot', (event) => boots.push(event));
  driver = createBmcDriver({ driver: 'redfish', address: host.url, systemId: machine.id }, { username: machine.username, password: machine.password });
});
afterAll(async () => {
  await driver?.close();
  await host?.close();
  await shared?.close();
});

const op = (name: string) => shared.operationId(name);

describe('BMC operation ledger', () => {
  it('sends a power cycle once, and reuses it on retry, also from another attempt', async () => {
    const first = await runBmcCommand(shared.ledger(), driver, op('step-3/cycle'), { kind: 'power.set', action: 'cycle' });
    expect(first.reused).toBe(false);
    expect(boots).toHaveLength(1);
    const requestsAfterFirst = host.get(machine.id)!.requests;

    const retry = await runBmcCommand(shared.ledger(), driver, op('step-3/cycle'), { kind: 'power.set', action: 'cycle' });
    expect(retry).toEqual({ reused: true, result: { done: true }, interrupted: false });
    expect(boots).toHaveLength(1);
    expect(host.get(machine.id)!.requests).toBe(requestsAfterFirst);

    // Another operation id is another command: it is sent.
    await runBmcCommand(shared.ledger(), driver, op('step-9/cycle'), { kind: 'power.set', action: 'cycle' });
    expect(boots).toHaveLength(2);
  });

  it('asks the control plane twice for a first send (the start, then the outcome), and reads only when a record is there', async () => {
    // The control plane runs in this process: its request counts are this registry's.
    const ledgerRequests = async (during: () => Promise<unknown>) => {
      const before = callCountsOf(await metricsRegistry.metrics());
      await during();
      const asked = callsPerMachine(before, callCountsOf(await metricsRegistry.metrics()), 1);
      return { get: asked['api POST /v1/agents/bmc-operations/get'] ?? 0, put: asked['api POST /v1/agents/bmc-operations/put'] ?? 0 };
    };
    const before = boots.length;
    const first = () => runBmcCommand(shared.ledger(), driver, op('count-cycle'), { kind: 'power.set', action: 'cycle' });
    expect(await ledgerRequests(first)).toEqual({ get: 0, put: 2 });
    expect(boots.length - before).toBe(1);
    // A retried step: its start is refused (a record is there), so it reads, and reuses.
    expect(await ledgerRequests(first)).toEqual({ get: 1, put: 1 });
    expect(boots.length - before).toBe(1);
  });

  it('sends one command when two callers race with the same id', async () => {
    const ledger = shared.ledger();
    const before = boots.length;
    const [a, b] = await Promise.all([
      runBmcCommand(ledger, driver, op('race-1'), { kind: 'power.set', action: 'reset' }),
      runBmcCommand(ledger, driver, op('race-1'), { kind: 'power.set', action: 'reset' }),
    ]);
    expect(boots.length - before).toBe(1);
    expect([a.reused, b.reused].sort()).toEqual([false, true]);
  });

  it('never re-sends a cycle whose outcome is unknown, but re-sends an idempotent command', async () => {
    const ledger = shared.ledger();
    // The agent died after writing "started" and (maybe) sending.
    const startedAt = new Date().toISOString();
    await ledger.put({ operationId: op('crash-cycle'), kind: 'power.set(cycle)', bmc: driver.bmcId, state: 'started', startedAt });
    await ledger.put({ operationId: op('crash-boot'), kind: 'boot.set(pxe,once)', bmc: driver.bmcId, state: 'started', startedAt });
    const before = boots.length;
    expect(await runBmcCommand(ledger, driver, op('crash-cycle'), { kind: 'power.set', action: 'cycle' })).toEqual({
      reused: true,
      result: null,
      interrupted: true,
    });
    expect(boots.length).toBe(before);
    const boot = await runBmcCommand(ledger, driver, op('crash-boot'), { kind: 'boot.set', setting: { device: 'pxe', persistent: false } });
    expect(boot.reused).toBe(false);
    expect(await driver.management.getBoot()).toEqual({ device: 'pxe', persistent: false });
    expect((await ledger.get(op('crash-boot')))?.state).toBe('succeeded');
  });

  it('sends again after a definite failure, and records the BMC message without the password', async () => {
    const wrongPassword = 'ledger-wrong-pw';
    const bad = createBmcDriver({ driver: 'redfish', address: host.url, systemId: machine.id }, { username: machine.username, password: wrongPassword });
    const failed = (await runBmcCommand(shared.ledger(), bad, op('op-fail'), { kind: 'power.set', action: 'on' }).catch((e: unknown) => e)) as IronflowError;
    expect(failed.code).toBe('DRIVER_ERROR');
    const record = await shared.ledger().get(op('op-fail'));
    expect(record?.state).toBe('failed');
    expect(record?.error?.message).toMatch(/Incorrect username or password/);
    expect(JSON.stringify(record)).not.toContain(wrongPassword);
    await bad.close();
    // The operator fixed the credential; the retried step sends it.
    const retried = await runBmcCommand(shared.ledger(), driver, op('op-fail'), { kind: 'power.set', action: 'on' });
    expect(retried.reused).toBe(false);
  });

  it('refuses an operation id reused for a different command', async () => {
    const ledger = shared.ledger();
    await runBmcCommand(ledger, driver, op('op-x'), { kind: 'power.get' });
    const error = (await runBmcCommand(ledger, driver, op('op-x'), { kind: 'power.set', action: 'off' }).catch((e: unknown) => e)) as IronflowError;
    expect(error.code).toBe('CONFLICT');
  });
});
