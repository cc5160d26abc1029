// The API under load, in a process of its own (with IRONFLOW_API_PROCESSES=N, N-1 more API
// processes beside it: stack/api-processes.ts; the load generator runs in another): a
// control plane (API and worker) on a fresh Temporal dev server and on the database
// DATABASE_URL names (SQLite when unset), with a site, a pool and 500 metal nodes to read and to
// act on (metal maintenance, metal power). Each node has an emulated Redfish BMC
// (bench/api/bmcs.ts) and credentials in the secret store, and a real site agent (`ironflow agent
// site`) is joined to the site, both in processes of their own, so a power run goes through to
// the BMC. Prints one JSON line { url, bearer, poolId, nodeIds } when ready, and runs until
// killed.
//
//   npx tsx bench/api/serve.ts
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../../cli/api-client';
import { newId } from '../../services/ids';
import { bmcSecretPurpose } from '../../services/metal/enroll';
import { startControlPlane } from '../../stack/control-plane';
import { writeLocalSiteAgentConfig } from '../../stack/local-site-agent-config';
import { startBenchStack } from '../lib/bench-stack';
import { serveUntilKilled, startReadyChild } from '../lib/ready-child';
import type { Bmcs } from './bmcs';

const NODES = 500;
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** What the site agent logs once its session is up and it serves the site. */
const AGENT_READY = 'holding the boot lease: active boot server';

/** What this process prints once ready. */
export interface Served {
  url: string;
  bearer: string;
  poolId: string;
  nodeIds: string[];
}

/** `ironflow agent site` joined with a fresh site token, its log in `dir`; resolves once it serves the site. */
async function startSiteAgent(api: ApiClient, siteId: string, controlPlaneUrl: string, dir: string): Promise<() => Promise<void>> {
  const token = await api.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600, maxUses: 1 });
  const config = writeLocalSiteAgentConfig(dir, controlPlaneUrl);
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'ironflow.mjs'), 'agent', 'site', '--config', config], {
    cwd: repoRoot,
    env: { ...process.env, IRONFLOW_JOIN_TOKEN: token.token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.once('exit', () => child.kill('SIGTERM')); // never left behind, however this process ends
  const log = createWriteStream(path.join(dir, 'site-agent.log'));
  const lines = createInterface({ input: child.stderr });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the site agent did not serve the site within 60 s: see ${log.path as string}`)), 60_000);
    lines.on('line', (line) => {
      log.write(`${line}\n`);
      if (line.includes(AGENT_READY)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`the site agent exited with ${code} before it served the site: see ${log.path as string}`)));
  });
  return async () => {
    child.kill('SIGTERM');
    await exited;
    log.end();
  };
}

async function main(): Promise<{ ready: Served; stop(): Promise<void> }> {
  const stack = await startBenchStack('api', { IRONFLOW_LOG_LEVEL: 'warn' });
  const { config } = stack;
  const cp = await startControlPlane(config);
  const bmcs = await startReadyChild<Bmcs>('bench/api/bmcs.ts', [String(NODES)]);
  process.once('exit', () => void bmcs.stop()); // never left behind, however this process ends
  const siteId = newId('site');
  const poolId = newId('pool');
  await cp.db.site.create({
    data: { id: siteId, ownerTenantId: 'root', kind: 'shared', region: 'bench', callerId: 'bench', idempotencyKey: 'bench', requestHash: 'bench' },
  });
  await cp.db.pool.create({ data: { id: poolId, tenantId: 'root', siteId, class: 'bench', policy: {} } });
  const stopAgent = await startSiteAgent(new ApiClient(cp.url, cp.rootCredential.bearer), siteId, cp.url, path.join(stack.dir, 'site-agent'));
  const ids = Array.from({ length: NODES }, () => newId('node'));
  const credentialsRefs = await cp.db.$transaction(async (tx) => {
    const refs: string[] = [];
    for (const [i, id] of ids.entries()) {
      const machine = bmcs.ready.machines[i]!;
      refs.push(
        await cp.secrets.put(tx, {
          tenantId: 'root',
          purpose: bmcSecretPurpose(id),
          value: JSON.stringify({ username: machine.username, password: machine.password }),
        }),
      );
    }
    return refs;
  });
  await cp.db.node.createMany({
    data: ids.map((id, i) => ({
      id,
      tenantId: 'root',
      siteId,
      poolId,
      role: 'machine',
      provisionState: 'ready',
      power: 'off',
      bmcDriver: 'redfish',
      bmcAddress: `${bmcs.ready.url}/redfish/v1/Systems/${bmcs.ready.machines[i]!.id}`,
      bmcCredentialsRef: credentialsRefs[i]!,
      macs: [
        `52:54:00:00:${Math.floor(i / 256)
          .toString(16)
          .padStart(2, '0')}:${(i % 256).toString(16).padStart(2, '0')}`,
      ],
    })),
  });
  return {
    ready: { url: cp.url, bearer: cp.rootCredential.bearer, poolId, nodeIds: ids },
    stop: async () => {
      await stopAgent();
      await bmcs.stop();
      await cp.close();
      await stack.close();
    },
  };
}

serveUntilKilled(main);
