// How long `metal bulk` takes to apply a verb to 10,000 nodes, on the real API, control-plane
// worker, Temporal dev server (SQLite store on disk) and a SQLite database, beside the way it
// was done before (one request walking the nodes, applyVerb per node in turn), measured in the
// same run on a second set of the same nodes. The nodes are rows (no machine boots); the verb
// is retire: refused by state on deployed nodes, accepted on ready ones (each accepted node's
// move wakes its lifecycle workflow, as a single retire does).
//
//   npx tsx bench/metal-bulk.ts [--nodes 10000] [--accepted 200]   (--accepted 0: the mixed run only)
import { parseArgs } from 'node:util';
import { ApiClient } from '../cli/api-client';
import { isIronflowError } from '../core/errors';
import { newId } from '../services/ids';
import { applyVerb, type MetalDeps } from '../services/metal/verbs';
import type { MetalBulkPage, MetalBulkRunView } from '../core/schemas/metal';
import { resolveProfile } from '../profiles/store';
import { startControlPlane, type ControlPlane } from '../stack/control-plane';
import { startBenchStack } from './lib/bench-stack';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '10000' }, accepted: { type: 'string', default: '200' } } });
const mixedNodes = Number(values.nodes);
const acceptedNodes = Number(values.accepted);

interface Fleet {
  poolId: string;
  ids: string[];
}

async function addFleet(cp: ControlPlane, api: ApiClient, siteId: string, count: number, state: (i: number) => string): Promise<Fleet> {
  const poolId = (await api.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: `bench-${newId('pool').slice(-6)}` })).id;
  const ids = Array.from({ length: count }, () => newId('node'));
  for (let from = 0; from < count; from += 1000) {
    await cp.db.node.createMany({
      data: ids.slice(from, from + 1000).map((id, k) => ({ id, tenantId: 'root', siteId, poolId, role: 'dedicated', provisionState: state(from + k) })),
    });
  }
  return { poolId, ids };
}

/** The bulk route: the answer's latency, then the time until every node is decided. */
async function viaBulk(api: ApiClient, fleet: Fleet): Promise<{ answerMs: number; seconds: number; counts: MetalBulkRunView['counts'] }> {
  const t0 = performance.now();
  const run = await api.call<MetalBulkRunView>('POST', '/v1/metal/bulk', {
    tenantId: 'root',
    poolId: fleet.poolId,
    verb: 'retire',
    nodeIds: fleet.ids,
    reason: 'bench',
  });
  const answerMs = performance.now() - t0;
  for (;;) {
    const page = await api.call<MetalBulkPage>('GET', `/v1/metal/bulk/${run.bulkId}?tenantId=root&limit=1`);
    if (page.status !== 'running') return { answerMs, seconds: (performance.now() - t0) / 1000, counts: page.counts };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What the route did before: applyVerb on each node in turn, inside one request. */
async function walkInTurn(deps: MetalDeps, fleet: Fleet): Promise<{ seconds: number; accepted: number; refused: number }> {
  const t0 = performance.now();
  let accepted = 0;
  let refused = 0;
  for (const nodeId of fleet.ids) {
    try {
      await applyVerb(deps, { tenantId: 'root', nodeId, poolId: fleet.poolId }, { verb: 'retire' });
      accepted += 1;
    } catch (err) {
      if (!isIronflowError(err)) throw err;
      refused += 1;
    }
  }
  return { seconds: (performance.now() - t0) / 1000, accepted, refused };
}

async function main(): Promise<void> {
  const stack = await startBenchStack('metal-bulk');
  const { config } = stack;
  const cp = await startControlPlane(config);
  try {
    const api = new ApiClient(cp.url, cp.rootCredential.bearer);
    const deps: MetalDeps = {
      db: cp.db,
      temporal: cp.temporal,
      controlQueue: config.controlQueue,
      resolveDeployProfile: async (db, tenantId, id, version) => (await resolveProfile(db, tenantId, id, version)).document as { target: string },
    };
    const siteId = (await api.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'bench', idempotencyKey: 'bench-site' }))
      .id;
    // Every thousandth node ready (accepted), the rest deployed (refused by state).
    const mixed = (i: number) => (i % 1000 === 0 ? 'ready' : 'deployed');
    const note = (what: string, value: unknown) => process.stderr.write(`${new Date().toISOString()} ${what}: ${JSON.stringify(value)}\n`);
    const mixedBulk = await viaBulk(api, await addFleet(cp, api, siteId, mixedNodes, mixed));
    note('mixed, bulk', mixedBulk);
    const mixedWalk = await walkInTurn(deps, await addFleet(cp, api, siteId, mixedNodes, mixed));
    note('mixed, in turn', mixedWalk);
    const result: Record<string, unknown> = {
      mixed: {
        nodes: mixedNodes,
        bulk: { answerMs: Math.round(mixedBulk.answerMs), seconds: Number(mixedBulk.seconds.toFixed(2)), counts: mixedBulk.counts },
        inTurn: { ...mixedWalk, seconds: Number(mixedWalk.seconds.toFixed(2)) },
      },
    };
    if (acceptedNodes > 0) {
      const acceptedBulk = await viaBulk(api, await addFleet(cp, api, siteId, acceptedNodes, () => 'ready'));
      note('accepted, bulk', acceptedBulk);
      const acceptedWalk = await walkInTurn(deps, await addFleet(cp, api, siteId, acceptedNodes, () => 'ready'));
      note('accepted, in turn', acceptedWalk);
      result.accepted = {
        nodes: acceptedNodes,
        bulk: { answerMs: Math.round(acceptedBulk.answerMs), seconds: Number(acceptedBulk.seconds.toFixed(2)), counts: acceptedBulk.counts },
        inTurn: { ...acceptedWalk, seconds: Number(acceptedWalk.seconds.toFixed(2)) },
      };
    }
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
