// One side of the engine figure, in a process of its own so its CPU time is its own: N
// workflows of three event-row steps, C at a time, on a fresh Temporal dev server (the
// dev stack's settings) and SQLite database. Prints one JSON line:
// { wallMs, cpuMs, runs, concurrency, latencyMs: { p50, p95 }, phases: [{ chain, wallMs }] }.
//
// --warmup W runs W workflows (of the first phase's chain, C at a time) before it starts counting:
// a running control plane has its code compiled and its caches warm.
//
// --chains (the Ironflow side; the fleet figure's bound) replaces the one workflow per run by
// phases run one after the other, each a chain of workflows per node in turn with those step
// counts: "1,3,6;6;5" is a phase of three workflows (1, 3 and 6 steps) per node, then one of 6,
// then one of 5, every node's chain C at a time, as a fleet's enroll, deploy and release run.
//
//   npx tsx bench/engine/side.ts --side ironflow|bare --runs 100 --concurrency 25 [--warmup 50] [--chains 1,3,6;6;5]
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
import { parseChains } from '../lib/chains';
import { percentile } from '../lib/percentile';
import { createBareActivities } from './bare-activities';
import { startBenchStack } from '../lib/bench-stack';

const { values } = parseArgs({
  options: {
    side: { type: 'string' },
    runs: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '25' },
    chains: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '0' },
  },
});
/** A whole number of at least `min`, or an error naming the flag. */
function countFlag(flag: 'runs' | 'warmup' | 'concurrency', min: number): number {
  const value = Number(values[flag]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${flag} ${values[flag]}: give a whole number of at least ${min}`);
  return value;
}
const runs = countFlag('runs', 1);
const warmup = countFlag('warmup', 0);
const concurrency = countFlag('concurrency', 1);
const phases = parseChains(values.chains);
const nodeId = (i: number) => `node_bench${String(i).padStart(5, '0')}`;

/** Starts node i's workflow of `steps` steps (the phase's `position`-th of its chain) and resolves when it finished. */
type RunOne = (i: number, steps: number, position: string) => Promise<void>;

async function seedNodes(db: Db): Promise<void> {
  await db.site.create({
    data: { id: 'site_bench', ownerTenantId: 'root', kind: 'shared', region: 'bench', callerId: 'bench', idempotencyKey: 'bench', requestHash: 'bench' },
  });
  await db.node.createMany({ data: Array.from({ length: runs }, (_, i) => ({ id: nodeId(i), tenantId: 'root', siteId: 'site_bench', role: 'host' })) });
}

async function ironflowSide(config: IronflowConfig): Promise<{ runOne: RunOne; close(): Promise<void> }> {
  const cp = await startControlPlane(config);
  await seedNodes(cp.db);
  for (const count of new Set(phases.flat())) {
    const steps = Array.from({ length: count }, (_, n) => ({ use: 'event.append', with: { message: `step ${n + 1}` } }));
    await createProfile(cp.db, { tenantId: 'root', public: false, document: { id: `bench-${count}-steps`, version: 1, target: 'metal', steps } });
  }
  return {
    runOne: async (i, steps, position) => {
      const run = await startProvision(cp, { tenantId: 'root', nodeId: nodeId(i), profileId: `bench-${steps}-steps`, provisionState: `bench-${position}` });
      await cp.temporal.workflow.getHandle(run.workflowId).result();
    },
    close: () => cp.close(),
  };
}

async function bareSide(config: IronflowConfig): Promise<{ runOne: RunOne; close(): Promise<void> }> {
  if (values.chains !== '3') throw new Error('--chains is for the ironflow side: the bare workflow has three steps');
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
    runOne: async (i, _steps, position) => {
      await client.workflow.execute('bareThreeSteps', { taskQueue, workflowId: `bare:${nodeId(i)}:${position}`, args: [nodeId(i)] });
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

/** Nodes 0…count-1 each run `chain` in turn, `concurrency` nodes at a time; answers each node's time through its chain. */
async function runChains(runOne: RunOne, chain: number[], count: number, label: string): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        for (const [position, steps] of chain.entries()) await runOne(i, steps, `${label}-w${position}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return latencies;
}

async function main(): Promise<void> {
  if (values.side !== 'ironflow' && values.side !== 'bare') throw new Error('--side ironflow|bare');
  const stack = await startBenchStack(values.side);
  const { config } = stack;
  const side = values.side === 'ironflow' ? await ironflowSide(config) : await bareSide(config);
  try {
    await runChains(side.runOne, phases[0] ?? [], Math.min(warmup, runs), 'warmup');
    const latencies: number[] = [];
    const phaseWalls: Array<{ chain: number[]; wallMs: number }> = [];
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const [phase, chain] of phases.entries()) {
      const phaseStarted = performance.now();
      latencies.push(...(await runChains(side.runOne, chain, runs, `p${phase}`)));
      phaseWalls.push({ chain, wallMs: Math.round(performance.now() - phaseStarted) });
    }
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    latencies.sort((a, b) => a - b);
    const result = {
      wallMs: Math.round(wallMs),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      runs,
      concurrency,
      latencyMs: { p50: Math.round(percentile(latencies, 50)), p95: Math.round(percentile(latencies, 95)) },
      phases: phaseWalls,
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
