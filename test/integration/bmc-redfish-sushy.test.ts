// The Redfish driver against sushy-tools' emulator (PyPI, fake driver), over plain HTTP and
// over TLS with a pinned CA. Needs `sushy-emulator` on PATH: scripts/test-deps.sh.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createBmcDriver } from '../../agent/bmc';
import { IronflowError } from '../../core/errors';
import { redfishDriverContract, startImageServer, type RedfishContractEnv } from '../helpers/redfish-contract';
import { startSushy, type RunningSushy } from '../helpers/sushy';
import { makeServerCertificate } from '../helpers/tls';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';

const system = {
  uuid: '8f0c2b1e-5d3a-4c7e-9b2f-1a2b3c4d5e6f',
  name: 'node-a',
  macs: [{ mac: '52:54:00:aa:bb:01', ip: '192.0.2.11' }, { mac: '52:54:00:aa:bb:02' }],
};

let images: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  images = await startImageServer();
});
afterAll(async () => images?.close());

function envOf(sushy: RunningSushy): RedfishContractEnv {
  return {
    target: { address: sushy.url, systemId: system.uuid, ...(sushy.caPem ? { caPem: sushy.caPem } : {}) },
    username: sushy.username,
    password: sushy.password,
    uuid: system.uuid,
    macs: system.macs.map((n) => n.mac),
    // sushy's EthernetInterface template carries no IP addresses.
    ips: [],
    // The fake driver applies a power change 1 to 11 s later.
    powerSettleMs: 20_000,
    keepsOnceOverride: false,
    downloadsMedia: true,
  };
}

describe('Redfish driver against sushy-tools (HTTP)', () => {
  let sushy: RunningSushy;
  beforeAll(async () => {
    sushy = await startSushy({ systems: [system] });
  });
  afterAll(async () => sushy?.close());

  redfishDriverContract(
    () => envOf(sushy),
    () => images.url,
  );

  it('finds the system when no system id is given', async () => {
    const driver = createBmcDriver({ driver: 'redfish', address: sushy.url }, { username: sushy.username, password: sushy.password });
    try {
      expect((await driver.inspect()).systemUuid).toBe(system.uuid);
    } finally {
      await driver.close();
    }
  });
});

describe('Redfish driver against sushy-tools (TLS, pinned CA)', () => {
  let sushy: RunningSushy;
  beforeAll(async () => {
    sushy = await startSushy({ systems: [system], tls: true });
  });
  afterAll(async () => sushy?.close());

  it('talks to the BMC through its pinned CA', async () => {
    expect(sushy.url.startsWith('https://')).toBe(true);
    const driver = createBmcDriver(
      { driver: 'redfish', address: sushy.url, systemId: system.uuid, caPem: sushy.caPem },
      { username: sushy.username, password: sushy.password },
    );
    try {
      await driver.management.setBoot({ device: 'pxe', persistent: true });
      expect(await driver.management.getBoot()).toEqual({ device: 'pxe', persistent: true });
      expect((await driver.inspect()).pxeMacs).toContain('52:54:00:aa:bb:01');
    } finally {
      await driver.close();
    }
  });

  it('refuses a BMC whose certificate the system CA store does not trust', async () => {
    const driver = createBmcDriver({ driver: 'redfish', address: sushy.url, systemId: system.uuid }, { username: sushy.username, password: sushy.password });
    try {
      const error = await driver.power.get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IronflowError);
      expect((error as IronflowError).code).toBe('DRIVER_ERROR');
      expect((error as IronflowError).message).toMatch(/TLS: the BMC's certificate is not signed by the pinned or system CA/);
    } finally {
      await driver.close();
    }
  });

  it('refuses a BMC whose certificate another pinned CA did not sign', async () => {
    const other = makeServerCertificate(mkdtempSync(path.join(inject('runDir'), 'ironflow-otherca-')));
    const driver = createBmcDriver(
      { driver: 'redfish', address: sushy.url, systemId: system.uuid, caPem: other.caPem },
      { username: sushy.username, password: sushy.password },
    );
    try {
      const error = await driver.power.get().catch((e: unknown) => e);
      expect((error as IronflowError).code).toBe('DRIVER_ERROR');
      expect((error as IronflowError).message).toMatch(/TLS/);
    } finally {
      await driver.close();
    }
  });
});
