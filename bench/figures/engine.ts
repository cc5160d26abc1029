// The engine figure: Ironflow's provision workflow against bare Temporal running the same
// activity graph (bench/engine/side.ts), at several concurrencies, sides alternating, each
// run in a process of its own. Goal (issue 16): CPU ≤ 1.1× bare, wall ≤ 1.05×.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median } from '../peer-compare';
import type { Figure } from './figure';

const run = promisify(execFile);
const sideScript = fileURLToPath(new URL('../engine/side.ts', import.meta.url));

interface SideResult {
  wallMs: number;
  cpuMs: number;
  runs: number;
  concurrency: number;
  latencyMs: { p50: number; p95: number };
}

async function side(name: 'ironflow' | 'bare', runs: number, concurrency: number, warmup: number): Promise<SideResult> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', sideScript, '--side', name, '--runs', String(runs), '--concurrency', String(concurrency), '--warmup', String(warmup)],
    { maxBuffer: 1 << 20, timeout: 15 * 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as SideResult;
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

export const engineFigure: Figure = {
  id: 'engine',
  title: 'The provision engine against bare Temporal',
  async measure({ quick, progress }) {
    // 200 a run: at 25 at a time, 100 were only four waves, and its CPU a workflow swung by a third between runs.
    const runs = quick ? 20 : 200;
    /** Uncounted workflows first, as many at a time: a running control plane has its code compiled and its caches warm. */
    const warmupOf = (concurrency: number) => (quick ? 5 : Math.max(20, 2 * concurrency));
    const rounds = quick ? 1 : 3;
    const concurrencies = quick ? [1, 10] : [1, 5, 25];
    const total = concurrencies.length * rounds * 2;
    let done = 0;
    const rows: string[] = [];
    const latency = { ironflow: [] as Array<[number, number]>, bare: [] as Array<[number, number]> };
    for (const concurrency of concurrencies) {
      const results: Record<'ironflow' | 'bare', SideResult[]> = { ironflow: [], bare: [] };
      for (let round = 0; round < rounds; round++) {
        // Alternate who goes first, so neither always gets the warmer page cache.
        for (const name of round % 2 === 0 ? (['ironflow', 'bare'] as const) : (['bare', 'ironflow'] as const)) {
          progress(done++, total, `engine: ${name}, ${runs} workflows, ${concurrency} at a time`);
          results[name].push(await side(name, runs, concurrency, warmupOf(concurrency)));
        }
      }
      const m = (name: 'ironflow' | 'bare', pick: (r: SideResult) => number) => median(results[name].map(pick));
      const wall = { ironflow: m('ironflow', (r) => r.wallMs), bare: m('bare', (r) => r.wallMs) };
      const cpu = { ironflow: m('ironflow', (r) => r.cpuMs / r.runs), bare: m('bare', (r) => r.cpuMs / r.runs) };
      const p50 = { ironflow: m('ironflow', (r) => r.latencyMs.p50), bare: m('bare', (r) => r.latencyMs.p50) };
      const p95 = { ironflow: m('ironflow', (r) => r.latencyMs.p95), bare: m('bare', (r) => r.latencyMs.p95) };
      latency.ironflow.push([concurrency, p50.ironflow]);
      latency.bare.push([concurrency, p50.bare]);
      rows.push(
        `| ${runs} × ${concurrency} | ${(wall.ironflow / 1000).toFixed(1)} s | ${(wall.bare / 1000).toFixed(1)} s | ${ratio(wall.ironflow, wall.bare)} | ${cpu.ironflow.toFixed(0)} ms | ${cpu.bare.toFixed(0)} ms | ${ratio(cpu.ironflow, cpu.bare)} | ${p50.ironflow} / ${p95.ironflow} ms | ${p50.bare} / ${p95.bare} ms |`,
      );
    }
    progress(total, total, 'engine: done');
    return {
      table: [
        `Medians of ${rounds} alternating run${rounds > 1 ? 's' : ''} a side, each after ${quick ? 5 : 'max(20, 2 × concurrency)'} uncounted workflows.`,
        '',
        '| workflows × concurrency | wall Ironflow | wall bare | ratio | CPU / workflow Ironflow | bare | ratio | latency p50 / p95 Ironflow | bare |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n'),
      charts: [
        {
          file: 'engine-latency.png',
          chart: {
            title: 'Workflow latency (p50) against concurrency',
            xLabel: 'workflows at a time',
            yLabel: 'ms',
            series: [
              { name: 'Ironflow', points: latency.ironflow },
              { name: 'bare Temporal', points: latency.bare },
            ],
          },
        },
      ],
    };
  },
};
