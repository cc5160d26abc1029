// The API figure: latency at fixed request rates for reads and a verb, on SQLite and on
// PostgreSQL, the API in a process of its own (bench/api/serve.ts) and the load generator in
// another (bench/api/load.ts: requests evenly spaced, latency from each one's due instant).
// Goal (issue 16): p99 ≤ 20 ms at 500 reads/s. There is no peer on this machine to put beside it (Ironic's API needs its
// conductor, Keystone and a message bus); the goal is the line to meet.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { LoadPlan } from '../api/load';
import { median } from '../peer-compare';
import type { Figure } from './figure';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface Served {
  url: string;
  bearer: string;
  poolId: string;
  nodeIds: string[];
}

/** Starts bench/api/serve.ts on the database and resolves with what it printed once ready. */
async function serve(databaseUrl: string | undefined): Promise<{ served: Served; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'bench/api/serve.ts')], {
    cwd: repoRoot,
    env: { ...process.env, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench/api/serve.ts exited with ${code} before it was ready`)));
  });
  return {
    served: JSON.parse(line) as Served,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const CONNECTIONS = 20;
const WARM_UP = { rate: 100, seconds: 10 };

interface Load {
  p50: number;
  p99: number;
  rate: number;
  errors: number;
}

/** What one row measures: a GET of one path, or a plan of requests sent in turn. */
type Target = { name: string; path: string } | { name: string; plan: LoadPlan };

/**
 * `metal maintenance` on each node in turn, then off on each: every request changes its node
 * (a guarded update of the row and an event, in one transaction), as an operator's would.
 */
function maintenancePlan(s: Served): LoadPlan {
  const entry = (nodeId: string, on: boolean) => ({
    method: 'POST' as const,
    url: `${s.url}/v1/metal/nodes/${nodeId}/maintenance`,
    body: { tenantId: 'root', on, reason: 'bench: rack 7 recabling' },
  });
  return [...s.nodeIds.map((id) => entry(id, true)), ...s.nodeIds.map((id) => entry(id, false))];
}

async function load(served: Served, target: Target, planDir: string, rate: number, seconds: number): Promise<Load> {
  // A request that is refused would measure the refusal: send the first one and fail loudly
  // instead (a verb's first request is then sent twice, which changes nothing the second time).
  const first = 'path' in target ? { method: 'GET', url: `${served.url}${target.path}`, body: undefined } : target.plan[0];
  if (!first) throw new Error(`${target.name}: an empty plan`);
  const probe = await fetch(first.url, {
    method: first.method,
    headers: { authorization: `Bearer ${served.bearer}`, ...(first.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(first.body === undefined ? {} : { body: JSON.stringify(first.body) }),
  });
  if (!probe.ok) throw new Error(`${first.method} ${first.url} answered ${probe.status}: ${(await probe.text()).slice(0, 300)}`);
  let loadTarget = first.url;
  if ('plan' in target) {
    loadTarget = path.join(planDir, 'plan.json');
    writeFileSync(loadTarget, JSON.stringify(target.plan));
    loadTarget = `@${loadTarget}`;
  }
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', path.join(repoRoot, 'bench/api/load.ts'), loadTarget, String(rate), String(seconds), String(CONNECTIONS)],
    { cwd: repoRoot, env: { ...process.env, BENCH_API_BEARER: served.bearer } },
  );
  return JSON.parse(stdout) as Load;
}

/** A throw-away PostgreSQL (scripts/postgres.sh, as the PostgreSQL test pass uses). */
async function startPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ironflow-bench-pg-'));
  await run('chmod', ['755', dir]);
  const port = '55434';
  const { stdout } = await run('bash', [path.join(repoRoot, 'scripts/postgres.sh'), path.join(dir, 'data'), port]);
  const bin = (await run('bash', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1'])).stdout.trim();
  return {
    url: stdout.trim(),
    stop: async () => {
      await run('runuser', ['-u', 'postgres', '--', `${bin}/pg_ctl`, '-D', path.join(dir, 'data'), '-m', 'fast', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const apiFigure: Figure = {
  id: 'api',
  title: 'API latency at fixed request rates',
  async measure({ quick, progress }) {
    const rates = quick ? [100, 500] : [100, 250, 500, 1000];
    const seconds = quick ? 5 : 15;
    // At 500 pages a second this 2-core machine is near its knee, where one run's p99 follows
    // the machine's noise: each rate runs in rounds, interleaved, and the table gives medians.
    const rounds = quick ? 1 : 3;
    const targets = (s: Served): Target[] => [
      { name: 'one node', path: `/v1/metal/nodes/${s.nodeIds[0]}?tenantId=root` },
      { name: 'a page of 50 nodes', path: `/v1/metal/nodes?tenantId=root&poolId=${s.poolId}&limit=50` },
      { name: 'verb: maintenance on/off', plan: maintenancePlan(s) },
    ];
    const databases = ['SQLite', 'PostgreSQL'] as const;
    const total = databases.length * 3 * rounds * rates.length;
    const planDir = mkdtempSync(path.join(tmpdir(), 'ironflow-bench-api-plan-'));
    let done = 0;
    const rows: string[] = [];
    const series = new Map<string, Array<[number, number]>>();
    try {
      for (const database of databases) {
        const postgres = database === 'PostgreSQL' ? await startPostgres() : undefined;
        const api = await serve(postgres?.url);
        try {
          // A fresh process collects its start's garbage (the workflow bundle's build above all)
          // in its first 15–30 s, in pauses of 100–300 ms: a running API is past that. Each
          // request is warmed at a modest rate first, uncounted.
          for (const target of targets(api.served)) {
            progress(done, total, `api: ${database}, warming ${target.name} (${WARM_UP.seconds} s at ${WARM_UP.rate}/s, not counted)`);
            await load(api.served, target, planDir, WARM_UP.rate, WARM_UP.seconds);
          }
          for (const target of targets(api.served)) {
            const results = new Map<number, Load[]>(rates.map((rate) => [rate, []]));
            for (let round = 1; round <= rounds; round++) {
              for (const rate of rates) {
                progress(done++, total, `api: ${database}, ${target.name}, ${rate} requests/s, round ${round}/${rounds}`);
                results.get(rate)?.push(await load(api.served, target, planDir, rate, seconds));
              }
            }
            for (const [rate, runs] of results) {
              const p99s = runs.map((r) => r.p99).sort((a, b) => a - b);
              const p99 = median(p99s);
              const spread = rounds > 1 ? ` (${p99s[0]}–${p99s[p99s.length - 1]})` : '';
              const errors = runs.reduce((sum, r) => sum + r.errors, 0);
              rows.push(
                `| ${database} | ${target.name} | ${rate}/s | ${median(runs.map((r) => r.rate)).toFixed(0)}/s | ${median(runs.map((r) => r.p50))} ms | ${p99} ms${spread} | ${errors} |`,
              );
              const key = `${database}, ${target.name}`;
              series.set(key, [...(series.get(key) ?? []), [rate, p99]]);
            }
          }
        } finally {
          await api.stop();
          await postgres?.stop();
        }
      }
    } finally {
      rmSync(planDir, { recursive: true, force: true });
    }
    progress(total, total, 'api: done');
    return {
      table: [
        `A fresh API process per database, each request warmed ${WARM_UP.seconds} s at ${WARM_UP.rate}/s uncounted, then ${seconds} s at each rate${rounds > 1 ? `, ${rounds} rounds interleaved: medians, and the p99s' range` : ''}, requests evenly spaced over up to ${CONNECTIONS} connections, latency from each one's due instant; the goal is p99 ≤ 20 ms at 500 reads/s.`,
        '',
        '| database | request | asked | served | p50 | p99 | errors |',
        '| --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n'),
      charts: [
        {
          file: 'api-latency.png',
          chart: {
            title: 'API latency (p99) against request rate',
            xLabel: 'requests per second',
            yLabel: 'ms',
            series: [...series].map(([name, points]) => ({ name, points })),
          },
        },
      ],
    };
  },
};
