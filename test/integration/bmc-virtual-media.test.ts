// Virtual media through the Redfish driver as the site agent drives it (reliableDriver, the
// step's deadline): against sushy-tools' emulator (the real peer: it downloads the image on
// insert) the CD the Manager's VirtualMedia link leads to shows the image, and against our emulated
// BMC an insert or eject the BMC answers but never carries out is caught by the read-back and
// sent again, while IPMI, which has no virtual media, is UNSUPPORTED naming the driver and the
// sanboot fallback. Needs `sushy-emulator` on PATH: scripts/test-deps.sh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBmcDriver, virtualMediaOf, type BmcDriver } from '../../agent/bmc';
import { runBmcCommand } from '../../agent/bmc/commands';
import { JsonClient } from '../../agent/bmc/http-json';
import { reliableDriver } from '../../agent/bmc/reliable';
import { RedfishBmcHost } from '../../agent/emulator/redfish-bmc';
import { IronflowError } from '../../core/errors';
import { until } from '../helpers/boot-site';
import { startSharedLedger } from '../helpers/shared-bmc-ledger';
import { startImageServer } from '../helpers/redfish-contract';
import { startSushy, type RunningSushy } from '../helpers/sushy';

const system = { uuid: '6d1f0c3e-2a4b-4c5d-8e9f-0a1b2c3d4e5f', name: 'vm-a', macs: [{ mac: '52:54:00:cc:dd:01' }] };

let images: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  images = await startImageServer();
});
afterAll(async () => images?.close());

/** A driver as a site step gets it: retried with backoff and read back until the deadline. */
const reliable = (driver: BmcDriver, deadlineMs = 30_000) => reliableDriver(driver, { deadline: Date.now() + deadlineMs, initialBackoffMs: 100 });

describe('virtual media on sushy-tools (the real peer)', () => {
  let sushy: RunningSushy;
  let raw: JsonClient;
  const auth = () => ({ authorization: `Basic ${Buffer.from(`${sushy.username}:${sushy.password}`).toString('base64')}` });
  beforeAll(async () => {
    sushy = await startSushy({ systems: [system] });
    raw = new JsonClient(new URL(sushy.url));
  });
  afterAll(async () => {
    raw?.close();
    await sushy?.close();
  });

  it("inserts into and ejects from the Manager's virtual CD, as the BMC then reports", async () => {
    const driver = reliable(
      createBmcDriver({ driver: 'redfish', address: sushy.url, systemId: system.uuid }, { username: sushy.username, password: sushy.password }),
    );
    // The manager that manages the system, and the CD its VirtualMedia link leads to (sushy keeps it under the system).
    type Link = { '@odata.id': string };
    const get = async <T>(at: string) => (await raw.request('GET', at, auth())).body as T;
    const systemBody = await get<{ Links: { ManagedBy: Link[] } }>(`/redfish/v1/Systems/${system.uuid}`);
    const manager = await get<{ VirtualMedia: Link }>(systemBody.Links.ManagedBy[0]?.['@odata.id'] as string);
    const slots = await get<{ Members: Link[] }>(manager.VirtualMedia['@odata.id']);
    const managerCd = slots.Members.map((m) => m['@odata.id']).find((id) => id.endsWith('/Cd')) as string;
    expect(managerCd).toBeDefined();
    const image = `${images.url}/images/boot.iso`;
    try {
      await virtualMediaOf(driver).insert(image);
      expect((await raw.request('GET', managerCd, auth())).body).toMatchObject({ Inserted: true, Image: image });
      await virtualMediaOf(driver).eject();
      expect((await raw.request('GET', managerCd, auth())).body).toMatchObject({ Inserted: false });
    } finally {
      await driver.close();
    }
  });

  it("an image the BMC cannot download fails at once with the BMC's words (not retried: a 4xx)", async () => {
    const driver = reliable(
      createBmcDriver({ driver: 'redfish', address: sushy.url, systemId: system.uuid }, { username: sushy.username, password: sushy.password }),
    );
    try {
      const error = (await virtualMediaOf(driver)
        .insert(`${images.url}/images/missing.iso`)
        .catch((e: unknown) => e)) as IronflowError;
      expect(error.code).toBe('DRIVER_ERROR');
      expect(error.message).toMatch(/Cannot download virtual media: got error 404/);
      expect(error.message).not.toContain(sushy.password);
    } finally {
      await driver.close();
    }
  });
});

describe('virtual media on the emulated BMC, and where there is none', () => {
  let host: RedfishBmcHost;
  const machine = { id: 'vm-b', uuid: '6d1f0c3e-2a4b-4c5d-8e9f-0a1b2c3d4e60', macs: ['52:54:00:cc:dd:02'], username: 'admin', password: 'vm-pw-2' };
  beforeAll(async () => {
    host = await RedfishBmcHost.start();
    host.add(machine);
  });
  afterAll(async () => host?.close());

  it('logs each insert and eject it carried out in its command log', async () => {
    const driver = reliable(
      createBmcDriver({ driver: 'redfish', address: host.url, systemId: machine.id }, { username: machine.username, password: machine.password }),
    );
    const emulated = host.get(machine.id);
    try {
      await virtualMediaOf(driver).insert(`${images.url}/images/boot.iso`);
      await virtualMediaOf(driver).insert(`${images.url}/images/boot.iso`); // already in: not sent again
      await virtualMediaOf(driver).eject();
      await virtualMediaOf(driver).eject(); // nothing in: nothing sent
      expect(emulated?.commands.filter((c) => c.startsWith('media:'))).toEqual(['media:insert:boot.iso', 'media:eject']);
    } finally {
      await driver.close();
    }
  });

  it('an insert and an eject answered but not carried out are caught by the read-back and sent again', async () => {
    const emulated = host.get(machine.id);
    if (!emulated) throw new Error('no emulated machine');
    emulated.commands.length = 0;
    const driver = reliable(
      createBmcDriver({ driver: 'redfish', address: host.url, systemId: machine.id }, { username: machine.username, password: machine.password }),
    );
    try {
      for (const [command, run] of [
        ['media:insert:boot.iso', () => virtualMediaOf(driver).insert(`${images.url}/images/boot.iso`)],
        ['media:eject', () => virtualMediaOf(driver).eject()],
      ] as const) {
        // The BMC forgets every command until the first one was forgotten; then it is reliable again.
        host.setFaults(machine.id, { ignoreRate: 1 });
        const done = run();
        await until(`the BMC to forget ${command}`, () => emulated.commands.includes(`fault:ignored ${command}`), 10_000);
        host.setFaults(machine.id, null);
        await done;
        expect(emulated.commands.filter((c) => c.endsWith(command))).toEqual([`fault:ignored ${command}`, command]);
      }
      expect(emulated.mediaInserted).toBe(false);
    } finally {
      host.setFaults(machine.id, null);
      await driver.close();
    }
  }, 30_000);

  it('IPMI has no virtual media: UNSUPPORTED naming the driver and the sanboot fallback, before anything is sent', async () => {
    const driver = createBmcDriver({ driver: 'ipmi', address: '127.0.0.1:1' }, { username: 'admin', password: 'ipmi-pw-3' });
    const shared = await startSharedLedger();
    try {
      expect(driver.virtualMedia).toBeUndefined();
      const error = (await runBmcCommand(shared.ledger(), driver, shared.operationId('op-media-1'), {
        kind: 'media.insert',
        url: `${images.url}/images/boot.iso`,
      }).catch((e: unknown) => e)) as IronflowError;
      expect(error).toBeInstanceOf(IronflowError);
      expect(error.code).toBe('UNSUPPORTED');
      expect(error.message).toMatch(/ipmi driver has no virtual media.*sanboot/);
      expect(error.details).toMatchObject({ driver: 'ipmi' });
    } finally {
      await driver.close();
      await shared.close();
    }
  }, 60_000);
});
