// One side of the engine figure, in a process of its own so its CPU time is its own: N
// workflows of three event-row steps, C at a time, on a fresh Temporal dev server (the
// dev stack's settings) and SQLite database. Prints one JSON line:
// { wallMs, cpuMs, runs, concurrency, latencyMs: { p50, p95 } }.
//
//   npx tsx bench/engine/side.ts --side ironflow|bare --runs 100 --concurrency 25
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { type IronflowConfig } from '../../services/config';
import { databaseTarget } from '../../core/database-target';
import { createDb, type Db } from '../../services/db';
import { startProvision } from '../../profiles/launch';
import { createProfile } from '../../profiles/store';
import { startControlPlane } from '../../stack/control-plane';
import { migrateDatabase } from '../../stack/migrate';
import { installWorkerRuntime } from '../../worker/runtime';
import { percentile } from '../lib/percentile';
import { createBareActivities } from './bare-activities';
import { startBenchStack } from '../lib/bench-stack';

const { values } = parseArgs({
  options: { side: { type: 'string' }, runs: { type: 'string', default: '100' }, concurrency: { type: 'string', default: '25' } },
});
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const nodeId = (i: number) => `node_bench${String(i).padStart(5, '0')}`;

/** Starts one workflow and resolves when it finished. */
type RunOne = (i: number) => Promise<void>;

async function seedNodes(db: Db): Promise<void> {
  await db.site.create({
    data: { id: 'site_bench', ownerTenantId: 'root', kind: 'shared', region: 'bench', callerId: 'bench', idempotencyKey: 'bench', requestHash: 'bench' },
  });
  await db.node.createMany({ data: Array.from({ length: runs }, (_, i) => ({ id: nodeId(i), tenantId: 'root', siteId: 'site_bench', role: 'host' })) });
}

async function ironflowSide(config: IronflowConfig): Promise<{ runOne: RunOne; close(): Promise<void> }> {
  const cp = await startControlPlane(config);
  await seedNodes(cp.db);
  const steps = [1, 2, 3].map((n) => ({ use: 'event.append', with: { message: `step ${n}` } }));
  await createProfile(cp.db, { tenantId: 'root', public: false, document: { id: 'bench-three-steps', version: 1, target: 'metal', steps } });
  return {
    runOne: async (i) => {
      const run = await startProvision(cp, { tenantId: 'root', nodeId: nodeId(i), profileId: 'bench-three-steps', provisionState: 'bench' });
      await cp.temporal.workflow.getHandle(run.workflowId).result();
    },
    close: () => cp.close(),
  };
}

async function bareSide(config: IronflowConfig): Promise<{ runOne: RunOne; close(): Promise<void> }> {
  await migrateDatabase(config);
  const db = await createDb(databaseTarget(config));
  await seedNodes(db);
  installWorkerRuntime();
  const taskQueue = 'bench.bare';
  const workerConnection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./bare-workflow.ts', import.meta.url)),
    activities: createBareActivities(db),
  });
  const running = worker.run();
  const client = new Client({ connection: await Connection.connect({ address: config.temporal.address }) });
  return {
    runOne: async (i) => {
      await client.workflow.execute('bareThreeSteps', { taskQueue, workflowId: `bare:${nodeId(i)}`, args: [nodeId(i)] });
    },
    close: async () => {
      worker.shutdown();
      await running;
      await workerConnection.close();
      await client.connection.close();
      await db.$disconnect();
    },
  };
}

async function main(): Promise<void> {
  if (values.side !== 'ironflow' && values.side !== 'bare') throw new Error('--side ironflow|bare');
  const stack = await startBenchStack(values.side);
  const { config } = stack;
  const side = values.side === 'ironflow' ? await ironflowSide(config) : await bareSide(config);
  try {
    const latencies: number[] = [];
    let next = 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < runs) {
          const i = next++;
          const t0 = performance.now();
          await side.runOne(i);
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    latencies.sort((a, b) => a - b);
    const result = {
      wallMs: Math.round(wallMs),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      runs,
      concurrency,
      latencyMs: { p50: Math.round(percentile(latencies, 50)), p95: Math.round(percentile(latencies, 95)) },
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await side.close();
    await stack.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
