// What every benchmark stands on: a fresh Temporal dev server with the dev stack's settings
// (WAL store, search attributes) in a throw-away directory, and the config of a control plane
// on it (API and gateway on free ports, no SDK metrics exporter). Nothing shared with a
// running `npm start`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type IronflowConfig } from '../../services/config';
import { serverSettings, startTemporalServer } from '../../stack/temporal-server';
import { freePort } from '../../test/helpers/ports';

export interface BenchStack {
  dir: string;
  config: IronflowConfig;
  /** The environment `config` was loaded from: a control plane in another process loads the same. */
  env: Record<string, string>;
  /** The processes whose CPU time and memory (read from /proc) count with the control plane's: the Temporal server's and, on the cluster, PostgreSQL's (listed anew each call: its backends come and go). */
  serverPids(): number[];
  /** Stops the server and removes the directory. */
  close(): Promise<void>;
}

/** A bench control plane's settings: its data dir, its Temporal, the API and gateway on free ports, no SDK metrics exporter; then `env`. */
export function benchStackEnv(dataDir: string, temporalAddress: string, env: Record<string, string>): Record<string, string> {
  return {
    IRONFLOW_DATA_DIR: dataDir,
    IRONFLOW_TEMPORAL_ADDRESS: temporalAddress,
    IRONFLOW_API_PORT: '0',
    IRONFLOW_GATEWAY_PORT: '0',
    IRONFLOW_METRICS_SDK_ADDRESS: 'off',
    ...env,
  };
}

export async function startBenchStack(name: string, env: Record<string, string> = {}): Promise<BenchStack> {
  const dir = mkdtempSync(path.join(tmpdir(), `ironflow-bench-${name}-`));
  const address = `127.0.0.1:${await freePort()}`;
  const server = await startTemporalServer({
    address,
    namespace: 'default',
    dbFile: path.join(dir, 'temporal.db'),
    ...serverSettings(loadConfig({}).temporal),
    logFile: path.join(dir, 'temporal.log'),
  });
  const stackEnv = benchStackEnv(dir, address, env);
  const config = loadConfig({ ...process.env, ...stackEnv });
  const temporalPid = server.process.pid as number;
  return {
    dir,
    config,
    env: stackEnv,
    serverPids: () => [temporalPid],
    close: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
