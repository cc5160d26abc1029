// A real agent worker (agent/common/restricted-worker.ts) for a fresh identity joined to a site
// with a site token: what an agent's worker does through the agent gateway, on a real control
// plane and Temporal. The certificate's role is the site's; `mode` is the worker's.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startRestrictedWorker, type AgentActivity, type RestrictedWorker } from '../../agent/common/restricted-worker';
import type { AgentTemporal } from '../../core/schemas/join';
import { startTestControlPlane, type TestControlPlane } from './control-plane';
import { newKeyAndCsr, workDir } from './openssl';

export interface JoinedWorker {
  worker: RestrictedWorker;
  /** The queue the worker polls: the joined identity's own. */
  taskQueue: string;
}

export async function startJoinedWorker(
  on: TestControlPlane,
  siteId: string,
  options: { name: string; mode: 'site' | 'ramdisk' | 'node'; activities: Record<string, AgentActivity> },
): Promise<JoinedWorker> {
  const minted = await on.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, options.name, 'ec');
  const joined = await on.anonymous.call<{ certificateChain: string[]; temporal: AgentTemporal }>('POST', '/v1/join', { token: minted.token, csr });
  const worker = await startRestrictedWorker({
    mode: options.mode,
    kinds: Object.keys(options.activities),
    activities: options.activities,
    temporal: joined.temporal,
    credentials: { chain: joined.certificateChain, key: createPrivateKey(readFileSync(path.join(dir, `${options.name}.key`))) },
  });
  return { worker, taskQueue: joined.temporal.taskQueue };
}

/** A fresh test control plane with a new site of `region`, and a joined worker of `options` on it. */
export async function startJoinedWorkerOnNewSite(
  region: string,
  options: Parameters<typeof startJoinedWorker>[2],
): Promise<JoinedWorker & { t: TestControlPlane; siteId: string }> {
  const t = await startTestControlPlane();
  const site = await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region, idempotencyKey: `${region}-site` });
  return { t, siteId: site.id, ...(await startJoinedWorker(t, site.id, options)) };
}
