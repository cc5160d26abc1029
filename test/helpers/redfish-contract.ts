// The Redfish driver's behaviour, run against any Redfish BMC emulator: sushy-tools' and
// ours must both pass it, which keeps our emulator honest to the shape sushy serves.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { createBmcDriver, waitForPower, type BmcDriver } from '../../agent/bmc';
import { virtualMediaOf } from '../../agent/bmc/driver';
import { JsonClient } from '../../agent/bmc/http-json';
import { IronflowError } from '../../core/errors';
import type { RedfishTarget } from '../../core/schemas/bmc';

export interface RedfishContractEnv {
  target: { address: string; systemId: string; caPem?: string; auth?: 'basic' | 'session' };
  username: string;
  password: string;
  uuid: string;
  macs: string[];
  /** IPs the BMC reports for the NICs, if it reports any. */
  ips: string[];
  /** How long the BMC may take to apply a power change. */
  powerSettleMs: number;
  /** Whether the BMC keeps a one-time override distinct from a persistent one (sushy: always Continuous). */
  keepsOnceOverride: boolean;
  /** Whether the BMC downloads the image on insert (sushy does), so a bad URL fails there. */
  downloadsMedia: boolean;
}

function driverFor(env: RedfishContractEnv, overrides: Partial<RedfishTarget> = {}, password = env.password): BmcDriver {
  return createBmcDriver({ driver: 'redfish', ...env.target, ...overrides }, { username: env.username, password });
}

async function expectDriverError(promise: Promise<unknown>, bmcMessage: RegExp, secret?: string): Promise<IronflowError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IronflowError);
  const ironflowError = error as IronflowError;
  expect(ironflowError.code).toBe('DRIVER_ERROR');
  expect(ironflowError.message).toMatch(bmcMessage);
  if (secret) expect(JSON.stringify({ message: ironflowError.message, details: ironflowError.details })).not.toContain(secret);
  return ironflowError;
}

/** A tiny HTTP server with one ISO-ish file, for virtual media inserts the BMC downloads. */
export async function startImageServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/images/boot.iso') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '2048' });
      res.end(Buffer.alloc(2048, 7));
    } else {
      res.writeHead(404).end('no such image');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function redfishDriverContract(getEnv: () => RedfishContractEnv, getImageServer: () => string): void {
  it('inspects the system UUID, the PXE-capable NIC MACs and the IPs the BMC reports', async () => {
    const env = getEnv();
    const driver = driverFor(env);
    try {
      const inspection = await driver.inspect();
      expect(inspection.systemUuid).toBe(env.uuid.toLowerCase());
      expect(inspection.pxeMacs.sort()).toEqual(env.macs.map((m) => m.toLowerCase()).sort());
      expect(inspection.ips.sort()).toEqual([...env.ips].sort());
    } finally {
      await driver.close();
    }
  });

  it('powers on, cycles and powers off, as the BMC then reports', async () => {
    const env = getEnv();
    const driver = driverFor(env);
    try {
      await driver.power.set('off');
      await waitForPower(driver, 'off', { timeoutMs: env.powerSettleMs, intervalMs: 200 });
      await driver.power.set('on');
      await waitForPower(driver, 'on', { timeoutMs: env.powerSettleMs, intervalMs: 200 });
      expect(await driver.power.get()).toBe('on');
      await driver.power.set('cycle');
      await waitForPower(driver, 'on', { timeoutMs: env.powerSettleMs, intervalMs: 200 });
      await driver.power.set('off');
      await waitForPower(driver, 'off', { timeoutMs: env.powerSettleMs, intervalMs: 200 });
      expect(await driver.power.get()).toBe('off');
    } finally {
      await driver.close();
    }
  }, 90_000);

  it('sets the boot device one-time and persistently', async () => {
    const env = getEnv();
    const driver = driverFor(env);
    try {
      await driver.management.setBoot({ device: 'pxe', persistent: false });
      const once = await driver.management.getBoot();
      expect(once?.device).toBe('pxe');
      if (env.keepsOnceOverride) expect(once?.persistent).toBe(false);
      await driver.management.setBoot({ device: 'disk', persistent: true });
      expect(await driver.management.getBoot()).toEqual({ device: 'disk', persistent: true });
      await driver.management.setBoot({ device: 'cd', persistent: true });
      expect((await driver.management.getBoot())?.device).toBe('cd');
    } finally {
      await driver.close();
    }
  });

  it('inserts and ejects virtual media', async () => {
    const env = getEnv();
    const driver = driverFor(env);
    const raw = new JsonClient(new URL(env.target.address), { caPem: env.target.caPem });
    const auth = { authorization: `Basic ${Buffer.from(`${env.username}:${env.password}`).toString('base64')}` };
    const mediaPath = `/redfish/v1/Systems/${env.target.systemId}/VirtualMedia/Cd`;
    try {
      const image = `${getImageServer()}/images/boot.iso`;
      await virtualMediaOf(driver).insert(image);
      const inserted = (await raw.request('GET', mediaPath, auth)).body as { Inserted: boolean; Image: string };
      expect(inserted.Inserted).toBe(true);
      expect(inserted.Image).toBe(image);
      await virtualMediaOf(driver).insert(image); // already in: no second insert
      await virtualMediaOf(driver).eject();
      const ejected = (await raw.request('GET', mediaPath, auth)).body as { Inserted: boolean };
      expect(ejected.Inserted).toBe(false);
      await virtualMediaOf(driver).eject(); // nothing in: nothing to do
      if (env.downloadsMedia) {
        await expectDriverError(virtualMediaOf(driver).insert(`${getImageServer()}/images/missing.iso`), /Cannot download virtual media: got error 404/);
      }
    } finally {
      raw.close();
      await driver.close();
    }
  });

  it('surfaces a wrong password as DRIVER_ERROR with the BMC message, never the password', async () => {
    const env = getEnv();
    const wrong = 'wrong-Pa55word-xyzzy';
    const driver = driverFor(env, {}, wrong);
    try {
      const error = await expectDriverError(driver.power.get(), /Incorrect username or password/i, wrong);
      expect(error.details.status).toBe(401);
    } finally {
      await driver.close();
    }
  });

  it('surfaces an unknown system as DRIVER_ERROR with the BMC message', async () => {
    const env = getEnv();
    const driver = driverFor(env, { systemId: 'no-such-system' });
    try {
      const error = await expectDriverError(
        driver.management.setBoot({ device: 'pxe', persistent: false }),
        /system no-such-system was not found/i,
        env.password,
      );
      expect(error.details.status).toBe(404);
    } finally {
      await driver.close();
    }
  });
}
