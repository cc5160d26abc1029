// How many provision workflows per second the engine runs on one 2-core machine, and how
// long one takes, with the real Temporal dev server (SQLite, on disk) and the real
// control-plane worker and database. Each run is a compiled profile of three control
// steps (event.append: an activity that writes an event row), so what is measured is the
// engine's own cost: start, schedule, run, record, finish.
//
//   npx tsx bench/provision-throughput.ts [--runs 200] [--concurrency 50]
import { parseArgs } from 'node:util';
import { createProfile } from '../profiles/store';
import { startProvision } from '../profiles/launch';
import { startControlPlane } from '../stack/control-plane';
import { percentile } from './lib/percentile';
import { startBenchStack } from './lib/bench-stack';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' }, concurrency: { type: 'string', default: '50' } } });
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);

async function main(): Promise<void> {
  const stack = await startBenchStack('provision');
  const { config } = stack;
  const cp = await startControlPlane(config);
  try {
    await cp.db.site.create({
      data: { id: 'site_bench', ownerTenantId: 'root', kind: 'shared', region: 'bench', callerId: 'bench', idempotencyKey: 'bench', requestHash: 'bench' },
    });
    await cp.db.node.createMany({
      data: Array.from({ length: runs }, (_, i) => ({ id: `node_bench${String(i).padStart(5, '0')}`, tenantId: 'root', siteId: 'site_bench', role: 'host' })),
    });
    await createProfile(cp.db, {
      tenantId: 'root',
      public: false,
      document: {
        id: 'bench-three-steps',
        version: 1,
        target: 'metal',
        steps: [1, 2, 3].map((n) => ({ use: 'event.append', with: { message: `step ${n}` } })),
      },
    });

    const latencies: number[] = [];
    const started = performance.now();
    let next = 0;
    async function lane(): Promise<void> {
      while (next < runs) {
        const i = next++;
        const t0 = performance.now();
        const run = await startProvision(cp, {
          tenantId: 'root',
          nodeId: `node_bench${String(i).padStart(5, '0')}`,
          profileId: 'bench-three-steps',
          provisionState: 'bench',
        });
        await cp.temporal.workflow.getHandle(run.workflowId).result();
        latencies.push(performance.now() - t0);
      }
    }
    await Promise.all(Array.from({ length: concurrency }, lane));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const result = {
      runs,
      concurrency,
      seconds: Number(seconds.toFixed(2)),
      workflowsPerSecond: Number((runs / seconds).toFixed(1)),
      stepsPerSecond: Number(((runs * 3) / seconds).toFixed(1)),
      latencyMs: {
        p50: Math.round(percentile(latencies, 50)),
        p95: Math.round(percentile(latencies, 95)),
        max: Math.round(latencies[latencies.length - 1] ?? NaN),
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await cp.close();
    await stack.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
