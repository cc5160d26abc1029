// The fleet bench on the cluster profile (issue 16): what `npm run start:cluster` stands on
// (stack/cluster.ts: PostgreSQL, the real Temporal server on it with mTLS to its frontend, the
// API's database on PostgreSQL) in a throw-away directory, on free ports, and the config of a
// control plane on it. The control plane and the worker processes are the caller's to start.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startClusterBackends } from '../../stack/cluster';
import { defaultClusterPorts } from '../../stack/temporal-cluster';
import { freePort, portIsFree } from '../../test/helpers/ports';
import { procStatParentPid } from '../fleet/tally';
import { benchStackEnv, type BenchStack } from './bench-stack';

/**
 * A frontend port whose neighbours in Temporal's usual layout (defaultClusterPorts) are all
 * free, below 32768: the server keeps membership ports in a PostgreSQL smallint.
 */
async function freeClusterFrontendPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const frontend = 20_300 + Math.floor(Math.random() * 12_000);
    const ports = Object.values(defaultClusterPorts(frontend));
    if ((await Promise.all(ports.map(portIsFree))).every(Boolean)) return frontend;
  }
  throw new Error('no frontend port between 20300 and 32300 with its cluster ports (frontend -300 to +6) free: free some ports there and run again');
}

/** The postmaster and its children (backends, background workers), from /proc. */
function postgresPids(postmasterPid: number): number[] {
  const children = readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return procStatParentPid(readFileSync(`/proc/${entry}/stat`, 'utf8')) === postmasterPid ? [Number(entry)] : [];
    } catch {
      return []; // ended since the listing
    }
  });
  return [postmasterPid, ...children];
}

/** Like startBenchStack, on the cluster: `serverPids` are the Temporal server's and PostgreSQL's processes. */
export async function startClusterBenchStack(name: string, env: Record<string, string> = {}): Promise<BenchStack> {
  const dir = mkdtempSync(path.join(tmpdir(), `ironflow-bench-${name}-cluster-`));
  const stackEnv = benchStackEnv(path.join(dir, 'ironflow'), `127.0.0.1:${await freeClusterFrontendPort()}`, env);
  const stops: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const stop of stops.reverse()) await stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const {
      postgres,
      temporal,
      env: clusterEnv,
      config,
    } = await startClusterBackends(
      { clusterDir: dir, postgresPort: await freePort(), env: { ...process.env, ...stackEnv }, say: (line) => void process.stderr.write(`${line}\n`) },
      (_part, stop) => stops.push(stop),
    );
    const temporalPid = temporal.process.pid as number;
    return { dir, config, env: { ...stackEnv, ...clusterEnv }, serverPids: () => [temporalPid, ...postgresPids(postgres.postmasterPid())], close };
  } catch (err) {
    await close();
    throw err;
  }
}
