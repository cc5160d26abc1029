// How many long polls an agent's real worker (agent/common/restricted-worker.ts) holds open
// through the agent gateway: Temporal caps a namespace's concurrent polls, so a fleet's
// machine agents (ramdisk, installed node) must hold one each; a site agent keeps several for
// its commands. Read from the gateway's own gauge, on a real control plane and Temporal.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRestrictedWorker, type RestrictedWorker } from '../../agent/common/restricted-worker';
import type { AgentTemporal } from '../../core/schemas/join';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { newKeyAndCsr, workDir } from '../helpers/openssl';

let t: TestControlPlane;
let siteId: string;
const workers: RestrictedWorker[] = [];

beforeAll(async () => {
  t = await startTestControlPlane();
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-polls', idempotencyKey: 'polls-site' })).id;
});

afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await t?.close();
});

/** A fresh identity's worker in `mode`, serving one no-op step kind. The certificate's role (site) only labels the gauge. */
async function startWorker(name: string, mode: 'site' | 'ramdisk' | 'node'): Promise<void> {
  const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, name, 'ec');
  const joined = await t.anonymous.call<{ certificateChain: string[]; temporal: AgentTemporal }>('POST', '/v1/join', { token: minted.token, csr });
  workers.push(
    await startRestrictedWorker({
      mode,
      kinds: ['inventory.refresh'],
      activities: { 'inventory.refresh': async () => ({}) },
      temporal: joined.temporal,
      credentials: { chain: joined.certificateChain, key: createPrivateKey(readFileSync(path.join(dir, `${name}.key`))) },
    }),
  );
}

const openCalls = async (): Promise<number> => {
  const text = await (await fetch(`${t.cp.url}/metrics`, { headers: { authorization: `Bearer ${t.cp.rootCredential.bearer}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith('ironflow_gateway_open_calls{role="site"} '));
  return line ? Number(line.split(' ')[1]) : 0;
};

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
