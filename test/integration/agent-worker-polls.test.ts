// How many long polls an agent's real worker (agent/common/restricted-worker.ts) holds open
// through the agent gateway: Temporal caps a namespace's concurrent polls, so a fleet's
// machine agents (ramdisk, installed node) must hold one each; a site agent keeps several for
// its commands. Read from the gateway's own gauge, on a real control plane and Temporal; and
// when Temporal refuses polls past its cap, the gateway counts the refusals.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RestrictedWorker } from '../../agent/common/restricted-worker';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { startJoinedWorker } from '../helpers/joined-worker';
import { metricsValue } from '../helpers/metrics';
import { startTestTemporalServer } from '../helpers/temporal-server';
import { until } from '../helpers/provision';

let t: TestControlPlane;
let siteId: string;
const workers: RestrictedWorker[] = [];

const newSite = async (on: TestControlPlane) =>
  (await on.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-polls', idempotencyKey: 'polls-site' })).id;

beforeAll(async () => {
  t = await startTestControlPlane();
  siteId = await newSite(t);
});

afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await t?.close();
});

/** A fresh identity's worker in `mode`, serving one no-op step kind. The certificate's role (site) only labels the gauge. */
async function startWorker(name: string, mode: 'site' | 'ramdisk' | 'node', on = t, site = siteId): Promise<void> {
  workers.push((await startJoinedWorker(on, site, { name, mode, activities: { 'inventory.refresh': async () => ({}) } })).worker);
}

const openCalls = () => metricsValue(t, 'ironflow_gateway_open_calls{role="site"}');

/** The gauge's readings over a few seconds of an idle worker (its polls settle within the first). */
async function readings(): Promise<number[]> {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) {
    seen.push(await openCalls());
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return seen;
}

describe("an agent's worker", () => {
  it('holds one long poll when it is a machine agent, so a fleet stays under Temporal’s poll cap', async () => {
    await startWorker('ramdisk-polls', 'ramdisk');
    expect(await readings()).toEqual([1, 1, 1, 1, 1, 1]);
    await startWorker('node-polls', 'node');
    expect(await readings()).toEqual([2, 2, 2, 2, 2, 2]);
  });

  it('keeps several polls open when it is a site agent, for its many commands', async () => {
    const before = await openCalls();
    await startWorker('site-polls', 'site');
    expect(Math.min(...(await readings())) - before).toBeGreaterThan(1);
  });
});

describe('a Temporal whose poll cap is lower than the agents hold', () => {
  it("counts Temporal's refusals of agents' polls, so an operator sees the cap is too low", async () => {
    // Its own server: the run's shared one has temporal-dev.yaml's cap of 10,000.
    const temporal = await startTestTemporalServer(inject('runDir'), { name: 'temporal-poll-cap', dynamicConfig: { 'frontend.namespaceCount': 2 } });
    const capped = await startTestControlPlane({ config: await testConfig({ IRONFLOW_TEMPORAL_ADDRESS: temporal.address }) });
    try {
      // A site agent's worker keeps up to ten polls open: past the cap of 2 (with the control plane's own polls).
      await startWorker('site-past-cap', 'site', capped, await newSite(capped));
      const series = 'ironflow_gateway_calls_refused_total{role="site",reason="temporal-resource-exhausted"}';
      expect(
        await until(
          () => metricsValue(capped, series),
          (refused) => refused > 0,
          20_000,
          'a poll refused by Temporal',
        ),
      ).toBeGreaterThan(0);
    } finally {
      await workers.pop()?.stop();
      await capped.close();
      await temporal.server.stop();
    }
  }, 90_000);
});
