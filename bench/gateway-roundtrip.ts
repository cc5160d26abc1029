// What the agent gateway costs an agent's step: the activity round trip (scheduled →
// completed, from the workflow's own history) of the same trivial site step, served by a
// worker dialing the gateway with its certificate and by one dialing the Temporal frontend
// directly, on the real dev server, control plane and worker. The two alternate, workflow by
// workflow, so machine load falls on both alike.
//
//   npx tsx bench/gateway-roundtrip.ts [--workflows 10] [--steps 20]
import { generateKeyPairSync } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Worker } from '@temporalio/worker';
import { connectThroughGateway } from '../agent/common/gateway-connection';
import { connectWorker } from '../worker/worker-connection';
import { buildCsr } from '../services/pki/csr-builder';
import { sealedDataConverter } from '../services/sealing';
import type { JoinAnswer } from '../core/schemas/join';
import { createProfile } from '../profiles/store';
import { startProvision } from '../profiles/launch';
import { startControlPlane, type ControlPlane } from '../stack/control-plane';
import { keepSessions } from '../test/helpers/provision';
import { percentile } from './lib/percentile';
import { startBenchStack } from './lib/bench-stack';

const { values } = parseArgs({ options: { workflows: { type: 'string', default: '10' }, steps: { type: 'string', default: '20' } } });
const workflows = Number(values.workflows);
const steps = Number(values.steps);
const STEP = 'management.setBootDevice';

async function call<T>(cp: ControlPlane, method: string, route: string, body: unknown, bearer?: string): Promise<T> {
  const res = await fetch(`${cp.url}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Milliseconds from each step's ActivityTaskScheduled to its ActivityTaskCompleted. */
async function roundTrips(cp: ControlPlane, workflowId: string): Promise<number[]> {
  const history = await cp.temporal.workflow.getHandle(workflowId).fetchHistory();
  const scheduledAt = new Map<string, number>();
  const trips: number[] = [];
  const millis = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === STEP) scheduledAt.set(String(event.eventId), millis(event.eventTime));
    const completed = event.activityTaskCompletedEventAttributes;
    const from = completed ? scheduledAt.get(String(completed.scheduledEventId)) : undefined;
    if (from !== undefined) trips.push(millis(event.eventTime) - from);
  }
  return trips;
}

async function main(): Promise<void> {
  const stack = await startBenchStack('gateway');
  const { config } = stack;
  const cp = await startControlPlane(config);
  const root = cp.rootCredential.bearer;
  let sessions: { stop(): Promise<void> } | undefined;
  try {
    const site = await call<{ id: string }>(
      cp,
      'POST',
      '/v1/sites',
      { tenantId: 'root', kind: 'shared', region: 'bench', idempotencyKey: 'bench-gateway' },
      root,
    );
    const minted = await call<{ token: string }>(cp, 'POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600 }, root);
    const { privateKey: key } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const joined = await call<JoinAnswer>(cp, 'POST', '/v1/join', { token: minted.token, csr: await buildCsr(key, 'bench-site-agent') });
    sessions = keepSessions(cp.db, [{ nodeId: joined.nodeId, siteId: site.id, role: 'site', taskQueue: joined.temporal.taskQueue }]);
    await cp.db.bootLease.create({ data: { siteId: site.id, holderNodeId: joined.nodeId, epoch: 1, expiresAt: new Date(Date.now() + 3_600_000) } });
    await cp.db.node.createMany({
      data: Array.from({ length: workflows * 2 }, (_, i) => ({ id: `node_gw${String(i).padStart(4, '0')}`, tenantId: 'root', siteId: site.id, role: 'host' })),
    });
    await createProfile(cp.db, {
      tenantId: 'root',
      public: false,
      document: {
        id: 'bench-site-steps',
        version: 1,
        target: 'metal',
        steps: Array.from({ length: steps }, () => ({ use: STEP, on: 'site', with: { device: 'pxe' }, timeout: '30s' })),
      },
    });

    const paths = {
      gateway: () => connectThroughGateway(joined.temporal, { chain: joined.certificateChain, key }),
      // As agents connect (worker/worker-connection.ts): the two differ only by the gateway.
      direct: () => connectWorker({ address: config.temporal.address }),
    };
    const trips: Record<keyof typeof paths, number[]> = { gateway: [], direct: [] };
    let n = 0;
    for (let round = 0; round < workflows; round++) {
      for (const via of ['gateway', 'direct'] as const) {
        const connection = await paths[via]();
        // Both store sealed histories: the gateway seals for its agent, the direct worker holds the key itself.
        const dataConverter = via === 'direct' ? sealedDataConverter(config) : undefined;
        const worker = await Worker.create({
          connection,
          taskQueue: joined.temporal.taskQueue,
          activities: { [STEP]: async () => ({ device: 'pxe' }) },
          ...(dataConverter ? { dataConverter } : {}),
        });
        const running = worker.run();
        const nodeId = `node_gw${String(n++).padStart(4, '0')}`;
        const run = await startProvision(cp, { tenantId: 'root', nodeId, profileId: 'bench-site-steps', provisionState: 'bench' });
        await cp.temporal.workflow.getHandle(run.workflowId).result();
        worker.shutdown();
        await running;
        await connection.close();
        // The first workflow of each path warms its connection: not counted.
        if (round > 0) trips[via].push(...(await roundTrips(cp, run.workflowId)));
      }
    }
    const summary = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      return {
        steps: values.length,
        meanMs: Number(mean.toFixed(1)),
        p50Ms: Number(percentile(sorted, 50).toFixed(1)),
        p95Ms: Number(percentile(sorted, 95).toFixed(1)),
      };
    };
    const gateway = summary(trips.gateway);
    const direct = summary(trips.direct);
    process.stdout.write(
      `${JSON.stringify({ gateway, direct, ratioMean: Number((gateway.meanMs / direct.meanMs).toFixed(2)), ratioP50: Number((gateway.p50Ms / direct.p50Ms).toFixed(2)) }, null, 2)}\n`,
    );
  } finally {
    await sessions?.stop();
    await cp.close();
    await stack.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
