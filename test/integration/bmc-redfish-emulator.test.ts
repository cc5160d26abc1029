// The same Redfish driver tests against our emulated BMC (agent/emulator/redfish-bmc.ts),
// plus what only ours has: sessions, the boot events the machine emulator reacts to, the
// per-BMC concurrency limit seen from the BMC side, and the memory a BMC costs.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBmcDriver, waitForPower } from '../../agent/bmc';
import { KeyedLimiter } from '../../agent/bmc/limiter';
import { RedfishBmcHost, type BootEvent } from '../../agent/emulator/redfish-bmc';
import { IronflowError } from '../../core/errors';
import { redfishDriverContract, startImageServer } from '../helpers/redfish-contract';

const machine = {
  id: 'node-a',
  uuid: '3f9e1c2a-7b4d-4e8f-a1b2-c3d4e5f60718',
  macs: ['52:54:00:12:34:01', '52:54:00:12:34:02'],
  ips: ['192.0.2.21'],
  username: 'root',
  password: 'emulated-pw-1',
};

let host: RedfishBmcHost;
let images: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  host = await RedfishBmcHost.start();
  host.add(machine);
  host.add({ ...machine, id: 'node-b', uuid: '3f9e1c2a-7b4d-4e8f-a1b2-c3d4e5f60719', macs: ['52:54:00:12:34:03'], ips: [], password: 'other-pw' });
  images = await startImageServer();
});
afterAll(async () => {
  await host?.close();
  await images?.close();
});

describe('Redfish driver against the emulated BMC', () => {
  redfishDriverContract(
    () => ({
      target: { address: host.url, systemId: machine.id },
      username: machine.username,
      password: machine.password,
      uuid: machine.uuid,
      macs: machine.macs,
      ips: machine.ips,
      powerSettleMs: 2_000,
      keepsOnceOverride: true,
      downloadsMedia: false,
    }),
    () => images.url,
  );

  it('works with a Redfish session, and logs it out on close', async () => {
    const driver = createBmcDriver(
      { driver: 'redfish', address: host.url, systemId: machine.id, auth: 'session' },
      { username: machine.username, password: machine.password },
    );
    await driver.power.set('on');
    expect(await driver.power.get()).toBe('on');
    await driver.close();
    const wrong = createBmcDriver(
      { driver: 'redfish', address: host.url, systemId: machine.id, auth: 'session' },
      { username: machine.username, password: 'nope-nope-1' },
    );
    const error = (await wrong.power.get().catch((e: unknown) => e)) as IronflowError;
    expect(error.code).toBe('DRIVER_ERROR');
    expect(error.message).toMatch(/session login.*Incorrect username or password/);
    expect(error.message).not.toContain('nope-nope-1');
    await wrong.close();
  });

  it('shows a machine only to its own credentials', async () => {
    const driver = createBmcDriver({ driver: 'redfish', address: host.url, systemId: 'node-b' }, { username: machine.username, password: machine.password });
    const error = (await driver.power.get().catch((e: unknown) => e)) as IronflowError;
    expect(error.code).toBe('DRIVER_ERROR');
    expect(error.details.status).toBe(404);
    await driver.close();
  });

  it('boots to PXE once, then to disk, and tells the machine emulator', async () => {
    const events: BootEvent[] = [];
    const onBoot = (event: BootEvent) => events.push(event);
    host.on('boot', onBoot);
    const driver = createBmcDriver({ driver: 'redfish', address: host.url, systemId: machine.id }, { username: machine.username, password: machine.password });
    try {
      await driver.power.set('off');
      await driver.management.setBoot({ device: 'pxe', persistent: false });
      await driver.power.set('on');
      await driver.power.set('reset');
      await driver.management.setBoot({ device: 'cd', persistent: false });
      await driver.virtualMedia!.insert(`${images.url}/images/boot.iso`);
      await driver.power.set('cycle');
      await waitForPower(driver, 'on', { timeoutMs: 2000 });
      expect(events.filter((e) => e.machineId === machine.id)).toEqual([
        { machineId: machine.id, device: 'pxe' },
        { machineId: machine.id, device: 'disk' },
        { machineId: machine.id, device: 'cd', image: `${images.url}/images/boot.iso` },
      ]);
      expect(await driver.management.getBoot()).toBeNull();
    } finally {
      host.off('boot', onBoot);
      await driver.virtualMedia!.eject();
      await driver.close();
    }
  });

  it('keeps one request in flight per BMC across drivers, and more without the limit', async () => {
    const slow = await RedfishBmcHost.start({ responseDelayMs: 40 });
    try {
      const bmc = slow.add({ ...machine });
      const credentials = { username: machine.username, password: machine.password };
      const target = { driver: 'redfish' as const, address: slow.url, systemId: machine.id };
      const limited = Array.from({ length: 4 }, () => createBmcDriver(target, credentials));
      await Promise.all(limited.map((d) => d.inspect()));
      expect(bmc.requests).toBeGreaterThanOrEqual(4 * 4);
      expect(bmc.maxInFlight).toBe(1);
      await Promise.all(limited.map((d) => d.close()));

      bmc.maxInFlight = 0;
      const loose = new KeyedLimiter(4);
      const unlimited = Array.from({ length: 4 }, () => createBmcDriver(target, credentials, { limiter: loose }));
      await Promise.all(unlimited.map((d) => d.power.get()));
      expect(bmc.maxInFlight).toBeGreaterThan(1);
      await Promise.all(unlimited.map((d) => d.close()));
    } finally {
      await slow.close();
    }
  });

  it('costs little memory per emulated BMC (measured)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const fleet = await RedfishBmcHost.start();
    try {
      const count = 2000;
      gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < count; i++) {
        const hex = i.toString(16).padStart(4, '0');
        fleet.add({
          id: `m${i}`,
          uuid: `00000000-0000-4000-8000-00000000${hex}`,
          macs: [`52:54:01:00:${hex.slice(0, 2)}:${hex.slice(2)}`],
          username: 'root',
          password: `pw-${i}`,
        });
      }
      gc();
      const perBmc = (process.memoryUsage().heapUsed - before) / count;
      console.log(`emulated Redfish BMC: ${Math.round(perBmc)} bytes of heap each (${count} in one host)`);
      expect(fleet.size).toBe(count);
      expect(perBmc).toBeLessThan(4096);
      const driver = createBmcDriver({ driver: 'redfish', address: fleet.url, systemId: `m${count - 1}` }, { username: 'root', password: `pw-${count - 1}` });
      expect((await driver.inspect()).pxeMacs).toEqual(['52:54:01:00:07:cf']);
      await driver.close();
    } finally {
      await fleet.close();
    }
  });
});
