// Crashes during a deploy lose nothing (issue 7): on the end-to-end site (real API, database,
// control-plane worker, Temporal dev server and site agent; emulated Redfish machines booting
// real ramdisk and node agents; a signed image over HTTPS), a deploy to a `ready` machine
// survives, separately, a SIGKILL of the control-plane worker while the image streams, of the
// site agent the moment the BMC carried out its power-on, of the site agent while the BMC held
// its power-on unanswered and not carried out, and of the Temporal dev server (its own
// database file) while the image streams. Each time the killed piece comes back, the node
// reaches `deployed` with the image's bytes on its disk, and the hardware says nothing ran
// twice: the BMC carried out one power-on (and each boot override once), and the image was
// fetched and written once.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { Machine } from '../../agent/emulator/machine';
import type { PowerEvent } from '../../agent/emulator/redfish-bmc';
import { serverSettings, startTemporalServer, type TemporalServer, type TemporalServerOptions } from '../../stack/temporal-server';
import { until } from '../helpers/boot-site';
import { testConfig } from '../helpers/control-plane';
import { sha, startE2eSite, type E2eSite } from '../helpers/e2e-site';
import type { WorkerProcess } from '../helpers/worker-process';
import { freePort } from '../helpers/ports';

const PROFILE = 'crash-os-host';
/** The OS image: random bytes (a non-zero head, so the emulated firmware boots it). */
const osImage = randomBytes(2 * 1024 * 1024 + 77);

let temporalOptions: TemporalServerOptions;
let temporal: TemporalServer;
let site: E2eSite;
let worker: WorkerProcess;
let image: { path: string };
const nodes: Array<{ nodeId: string; machine: Machine }> = [];

beforeAll(async () => {
  // A Temporal dev server of this file's own, on a database file it is restarted on.
  const { temporal: defaults } = await testConfig();
  const runDir = inject('runDir');
  temporalOptions = {
    address: `127.0.0.1:${await freePort()}`,
    namespace: 'default',
    dbFile: path.join(runDir, 'crash-temporal', 'temporal.db'),
    ...serverSettings(defaults),
    logFile: path.join(runDir, 'crash-temporal', 'temporal.log'),
  };
  temporal = await startTemporalServer(temporalOptions);
  site = await startE2eSite('e2e-crash-site', { temporalAddress: temporalOptions.address, workerProcess: true, siteAgentProcess: true });
  worker = site.worker as WorkerProcess;
  image = await site.registerImage('crash-os@1', osImage);
  await site.deployProfile(PROFILE, 'crash-os@1');
  try {
    nodes.push(...(await site.enrollToReady(4, 60_000)));
  } catch (error) {
    console.log(['fleet:', ...site.fleetLog.slice(-40), 'agent:', ...site.agent.lines().slice(-40)].join('\n'));
    throw error;
  }
}, 240_000);

afterAll(async () => {
  await site?.close();
  await temporal?.stop();
});

/** Side effects of one machine so far: BMC commands carried out, image downloads, images written. */
function sideEffects(machine: Machine, nodeId: string) {
  const bmc = site.fleet.bmc.get(machine.description.id);
  if (!bmc) throw new Error(`no BMC for ${machine.description.id}`);
  const written = site.fleetLog.filter((line) => {
    const entry = JSON.parse(line) as { message?: string; nodeId?: string };
    return entry.message === 'image written' && entry.nodeId === nodeId;
  }).length;
  // Faults the BMC injected (a held request) were not carried out.
  return { bmcCommands: bmc.commands.filter((c) => !c.startsWith('fault:')), imageFetches: site.imageFetches.get(image.path) ?? 0, imagesWritten: written };
}

/** Deploys, lets `crash` do its worst meanwhile, and checks the outcome at the API, the disk and the hardware. */
async function deployThrough(node: { nodeId: string; machine: Machine }, crash: () => Promise<void>): Promise<void> {
  const { nodeId, machine } = node;
  const before = sideEffects(machine, nodeId);
  expect((await site.verb(nodeId, 'deploy', { profileId: PROFILE, profileVersion: 1 })).provisionState).toBe('deploying');
  await crash();
  const deployed = await site.settle(nodeId, 'deployed', 150_000);
  expect(deployed).toMatchObject({ role: 'host', power: 'on', maintenance: false });
  expect(sha(readFileSync(machine.diskPath).subarray(0, osImage.length))).toBe(sha(osImage));
  expect(machine.state).toBe('installed-os');

  const after = sideEffects(machine, nodeId);
  // One-time PXE, one power-on (the ready machine was off), boot from disk for good.
  expect(after.bmcCommands.slice(before.bmcCommands.length)).toEqual(['boot:Pxe/Once', 'reset:On', 'boot:Hdd/Continuous']);
  expect(after.imageFetches - before.imageFetches).toBe(1);
  expect(after.imagesWritten - before.imagesWritten).toBe(1);
  expect(await site.liveTokens(nodeId)).toBe(0);
  expect(site.bootEntries().filter((e) => e.nodeId === nodeId)).toEqual([]);
}

/** `promise`, or a failure naming `what` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The next download of the image is held after its first bytes: deploy.image is streaming. */
function imageStreaming() {
  const hold = site.holdImage(image.path);
  return { hold, streaming: within(hold.reached, 90_000, 'deploy.image to start streaming') };
}

describe('a deploy survives a crash of any one piece', () => {
  it('the control-plane worker SIGKILLed while deploy.image streams: a new worker finishes the deploy', async () => {
    const node = nodes[0] as { nodeId: string; machine: Machine };
    // Armed before the deploy is asked for, so no download can start ahead of it.
    const { hold, streaming } = imageStreaming();
    await deployThrough(node, async () => {
      await streaming;
      await worker.kill();
      hold.release(); // the ramdisk finishes writing while no worker runs
      worker = await site.startWorker();
    });
  }, 200_000);

  it('the site agent SIGKILLed the moment the BMC carried out its power-on: restarted on its data dir, it goes on without a second one', async () => {
    const node = nodes[1] as { nodeId: string; machine: Machine };
    await deployThrough(node, async () => {
      const killed = new Promise<void>((resolve) => {
        const onPower = (event: PowerEvent) => {
          if (event.machineId !== node.machine.description.id || event.state !== 'on') return;
          site.fleet.bmc.off('power', onPower);
          site.agent.kill(); // before the BMC's answer reaches the agent
          resolve();
        };
        site.fleet.bmc.on('power', onPower);
      });
      await within(killed, 90_000, 'the BMC to carry out the power-on');
      await site.agent.restart();
    });
  }, 200_000);

  it('the site agent SIGKILLed while the BMC holds its power-on unanswered (never carried out): restarted, it sends the power-on again and the deploy completes', async () => {
    const node = nodes[3] as { nodeId: string; machine: Machine };
    const machineId = node.machine.description.id;
    // The ledger holds the power-on as `started` with no outcome: a power-on is safe to send again (a cycle was not, and the boot never came).
    site.fleet.bmc.setFaults(machineId, { holdResets: 1 });
    await deployThrough(node, async () => {
      await until('the BMC to hold the power-on', () => site.fleet.bmc.get(machineId)?.commands.some((c) => c.startsWith('fault:held POST')), 90_000);
      site.agent.kill();
      await site.agent.restart();
    });
    expect(site.fleet.bmc.get(machineId)?.commands.filter((c) => c.startsWith('fault:'))).toEqual([
      `fault:held POST Systems/${machineId}/Actions/ComputerSystem.Reset`,
    ]);
  }, 200_000);

  it('the Temporal dev server SIGKILLed while deploy.image streams: restarted on its database file and port, the deploy completes', async () => {
    const node = nodes[2] as { nodeId: string; machine: Machine };
    await deployThrough(node, async () => {
      const { hold, streaming } = imageStreaming();
      await streaming;
      await temporal.stop('SIGKILL');
      hold.release();
      temporal = await startTemporalServer(temporalOptions);
      // The worker process may have given up on the lost server: start it again if so.
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) worker = await site.startWorker();
    });
  }, 200_000);
});
