// Open-loop load at a fixed rate, in a process of its own: request i is sent at start + i/rate
// over up to `connections` keep-alive connections, and its latency counts from that instant,
// so time spent waiting for a free connection or behind a stalled server is measured too
// (coordinated omission). autocannon's -R paces otherwise: each connection sends its share of
// the second back to back when the second starts, so all connections burst together and each
// request waits behind the others of the burst; its correction then weighs slow answers by
// their length (an expected interval of 1 ms). A first second at the rate is not counted: it
// warms what a running API has warm (this process's code, the connections, the database
// pool's). Prints one JSON line { p50, p99, rate, errors, errorsBy }. The bearer comes in BENCH_API_BEARER,
// not the command line, which any local user can read.
//
// The target is a URL to GET, or `@plan.json`: a list of requests ({ method, url, body? }),
// request i sending entry i modulo its length (a verb on each node in turn, say).
//
//   BENCH_API_BEARER=ifk_… node --import tsx bench/api/load.ts <url|@plan.json> <rate> <seconds> <connections>
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { z } from 'zod';
import { percentile } from '../lib/percentile';

const planSchema = z
  .array(z.object({ method: z.enum(['GET', 'POST']), url: z.url(), body: z.unknown().optional() }).strict())
  .min(1, 'a plan lists at least one request');
export type LoadPlan = z.infer<typeof planSchema>;

/** The requests a target names: a URL alone is one GET. */
function planOf(target: string): LoadPlan {
  if (!target.startsWith('@')) return [{ method: 'GET', url: target }];
  const parsed = planSchema.safeParse(JSON.parse(readFileSync(target.slice(1), 'utf8')));
  if (!parsed.success) throw new Error(`${target.slice(1)}: not a load plan: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

interface LoadResult {
  /** Milliseconds, from each request's due instant to its answer's end. */
  p50: number;
  p99: number;
  /** Answers per second over the run. */
  rate: number;
  /** Non-2xx answers and failed requests. */
  errors: number;
  /** The errors by HTTP status, or `network` for a request that got no answer. */
  errorsBy: Record<string, number>;
}

async function runLoad(plan: LoadPlan, bearer: string, rate: number, seconds: number, connections: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const warmUp = Math.round(rate);
  const total = warmUp + Math.round(rate * seconds);
  const latencies: number[] = [];
  let errors = 0;
  const errorsBy: Record<string, number> = {};
  const countError = (kind: string) => {
    errors++;
    errorsBy[kind] = (errorsBy[kind] ?? 0) + 1;
  };
  const start = performance.now() + 10;
  const dueAt = (i: number) => start + (i * 1000) / rate;

  const requests = plan.map((entry) => {
    const body = entry.body === undefined ? undefined : Buffer.from(JSON.stringify(entry.body));
    const headers = { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}) };
    return { url: entry.url, options: { agent, method: entry.method, headers }, body };
  });

  const send = (i: number) =>
    new Promise<void>((resolve) => {
      // The plan is never empty (planSchema), so every index names an entry.
      const { url, options, body } = requests[i % requests.length] as (typeof requests)[number];
      const request = http.request(url, options, (response) => {
        response.resume();
        response.once('end', () => {
          const failed = response.statusCode === undefined || response.statusCode >= 300;
          if (i >= warmUp) {
            if (failed) countError(String(response.statusCode ?? 'network'));
            else latencies.push(performance.now() - dueAt(i));
          }
          resolve();
        });
      });
      request.once('error', () => {
        if (i >= warmUp) countError('network');
        resolve();
      });
      request.end(body);
    });

  const inFlight: Array<Promise<void>> = [];
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      while (next < total && dueAt(next) <= performance.now()) inFlight.push(send(next++));
      if (next < total) setTimeout(tick, Math.max(0, dueAt(next) - performance.now()));
      else resolve();
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsedSeconds = (performance.now() - dueAt(warmUp)) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), rate: latencies.length / elapsedSeconds, errors, errorsBy };
}

async function main(): Promise<void> {
  const [target, rate, seconds, connections] = process.argv.slice(2);
  const bearer = process.env.BENCH_API_BEARER;
  if (!target || !bearer || !rate || !seconds || !connections)
    throw new Error('usage: BENCH_API_BEARER=ifk_… load.ts <url|@plan.json> <rate> <seconds> <connections>');
  const result = await runLoad(planOf(target), bearer, Number(rate), Number(seconds), Number(connections));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
