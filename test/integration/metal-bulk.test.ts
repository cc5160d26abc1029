// metal bulk over 10,000 nodes: the request is checked whole and answered at once (202, a
// run id), ONE workflow applies the verb to each node through the single verb's path and
// records each node's outcome, readable (paginated, filtered) after; cancel stops it; bad
// input is refused naming the path. The nodes are rows written directly (one pool); the verb
// is retire, refused by state on deployed nodes and accepted on ready ones (whose move is the
// observable effect: no machine boots).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../services/ids';
import type { MetalBulkPage, MetalBulkRunView } from '../../core/schemas/metal';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { until } from '../helpers/provision';

type ErrorBody = { error: { code: string; message: string; details: { path?: string; nodeIds?: string[]; missing?: number } } };

const NODES = 10_000;
/** Every thousandth node is ready (retire accepts it); the rest are deployed (retire refuses them). */
const isReady = (i: number) => i % 1000 === 0;

let t: TestControlPlane;
let siteId: string;
let poolId: string;
let otherPoolId: string;
const nodeIds: string[] = [];

async function addNodes(count: number, pool: string, tenantId: string, state: (i: number) => string): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId('node'));
  for (let from = 0; from < count; from += 1000) {
    const data = ids.slice(from, from + 1000).map((id, k) => ({ id, tenantId, siteId, poolId: pool, role: 'dedicated', provisionState: state(from + k) }));
    await t.cp.db.node.createMany({ data });
  }
  return ids;
}

const bulk = (body: Record<string, unknown>) =>
  t.root.request<MetalBulkRunView & ErrorBody>('POST', '/v1/metal/bulk', { tenantId: 'root', poolId, verb: 'retire', reason: 'decommission rack 7', ...body });
const page = (bulkId: string, query: Record<string, string> = {}) =>
  t.root.call<MetalBulkPage>('GET', `/v1/metal/bulk/${bulkId}?${new URLSearchParams({ tenantId: 'root', ...query })}`);
const ended = (bulkId: string) =>
  until(
    () => page(bulkId, { limit: '1' }),
    (r) => r.status !== 'running',
    110_000,
    `bulk run ${bulkId} to end`,
  );

beforeAll(async () => {
  t = await startTestControlPlane();
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-bulk', idempotencyKey: 'bulk-site' })).id;
  poolId = (await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'metal-bulk' })).id;
  otherPoolId = (await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'metal-bulk-other' })).id;
  nodeIds.push(...(await addNodes(NODES, poolId, 'root', (i) => (isReady(i) ? 'ready' : 'deployed'))));
});

afterAll(async () => t?.close());

describe('metal bulk', () => {
  it('answers 202 with a run id before the run ends; the workflow decides every node on its own and the outcomes read back by page', async () => {
    const res = await bulk({ nodeIds });
    const answeredAt = new Date().toISOString();
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(202);
    expect(res.body).toMatchObject({
      status: 'running',
      total: NODES,
      verb: 'retire',
      reason: 'decommission rack 7',
      finishedAt: null,
      counts: { pending: NODES, accepted: 0 },
    });
    expect(res.body.bulkId).toMatch(/^blk_[0-9a-z]{26}$/);
    expect(res.body.workflowId).toBe(`metal-bulk:${res.body.bulkId}`);

    const run = await ended(res.body.bulkId);
    expect(run.status).toBe('finished');
    expect(run.finishedAt && run.finishedAt > answeredAt, `finished ${run.finishedAt}, answered ${answeredAt}`).toBe(true);
    const ready = nodeIds.filter((_, i) => isReady(i));
    expect(run.counts).toEqual({ pending: 0, accepted: ready.length, refused: NODES - ready.length, failed: 0, cancelled: 0 });

    // Accepted: the verb's move, as a single retire makes it (its event, the state workflow it
    // names); the page shows each node's state now (its retire chain runs on: retiring or retired).
    const accepted = await page(res.body.bulkId, { outcome: 'accepted', limit: '1000' });
    expect(accepted.outcomes.map((o) => o.nodeId).sort()).toEqual([...ready].sort());
    for (const o of accepted.outcomes) {
      expect(o.error).toBeNull();
      expect(o.decidedAt).not.toBeNull();
      expect(['retiring', 'retired']).toContain(o.provisionState);
    }
    const moves = await t.cp.db.event.findMany({ where: { subjectId: { in: ready }, type: 'node.provision.retiring' } });
    expect(moves.map((e) => e.subjectId).sort()).toEqual([...ready].sort());
    for (const e of moves) expect(e.data).toMatchObject({ from: 'ready', to: 'retiring', verb: 'retire', workflowId: `node:${e.subjectId}:retiring:1` });
    expect(await t.cp.db.node.count({ where: { poolId, provisionState: 'deployed' } })).toBe(NODES - ready.length);

    // Refused: the verb's own refusal per node, every one of them across pages.
    let cursor: string | null = null;
    let refused = 0;
    do {
      const p: MetalBulkPage = await page(res.body.bulkId, { outcome: 'refused', limit: '1000', ...(cursor ? { cursor } : {}) });
      for (const o of p.outcomes) {
        expect(o.error?.code).toBe('INVALID_STATE');
        expect(o.provisionState).toBe('deployed');
      }
      refused += p.outcomes.length;
      cursor = p.nextCursor;
    } while (cursor);
    expect(refused).toBe(NODES - ready.length);
    const first = await page(res.body.bulkId, { limit: '3' });
    expect(first.outcomes.map((o) => o.seq)).toEqual([0, 1, 2]);
    expect(first.outcomes[1]?.error?.message).toContain('deployed');

    // One workflow, continued as new along the way (10,000 nodes in pages of 100, 25 pages a run).
    const runs = await until(
      async () => {
        const found = [];
        for await (const w of t.cp.temporal.workflow.list({ query: `WorkflowId = "${res.body.workflowId}"` })) found.push(w.status.name);
        return found;
      },
      (found) => found.length >= 4 && found.every((s) => s === 'COMPLETED' || s === 'CONTINUED_AS_NEW'),
      20_000,
      'the runs of the bulk workflow',
    );
    expect(runs.filter((s) => s === 'COMPLETED')).toHaveLength(1);
    const events = await until(
      () => t.cp.db.event.findMany({ where: { subjectId: res.body.bulkId }, orderBy: { seq: 'asc' } }),
      (e) => e.length === 2,
      10_000,
      'the bulk events',
    );
    expect(events.map((e) => e.type)).toEqual(['metal.bulk.started', 'metal.bulk.finished']);
    expect(events[0]?.data).toMatchObject({ reason: 'decommission rack 7', nodes: NODES, verb: 'retire', poolId });
  }, 120_000);

  it('cancel stops the run between nodes: what was not decided ends cancelled, and a second cancel is refused', async () => {
    const res = await bulk({ nodeIds });
    expect(res.status).toBe(202);
    const cancel = await t.root.request<MetalBulkRunView>('POST', `/v1/metal/bulk/${res.body.bulkId}/cancel`, { tenantId: 'root' });
    expect(cancel.status).toBe(200);
    expect(cancel.body.cancelRequestedAt).not.toBeNull();
    const run = await ended(res.body.bulkId);
    expect(run.status).toBe('cancelled');
    expect(run.counts.pending).toBe(0);
    expect(run.counts.cancelled).toBeGreaterThan(0);
    expect(run.counts.accepted + run.counts.refused + run.counts.failed + run.counts.cancelled).toBe(NODES);
    const cancelled = await page(res.body.bulkId, { outcome: 'cancelled', limit: '5' });
    expect(cancelled.outcomes.every((o) => o.error === null && o.decidedAt !== null)).toBe(true);
    const again = await t.root.request<ErrorBody>('POST', `/v1/metal/bulk/${res.body.bulkId}/cancel`, { tenantId: 'root' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('INVALID_STATE');
    await until(
      () => t.cp.db.event.count({ where: { subjectId: res.body.bulkId, type: 'metal.bulk.cancelled' } }),
      (n) => n === 1,
      10_000,
      'the cancelled event',
    );
  });

  it('refuses bad input whole, naming the path (and a bounded list of the ids), and nothing is recorded', async () => {
    const before = await t.cp.db.metalBulkRun.count();
    const tooMany = await bulk({ nodeIds: [...nodeIds, newId('node')] });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'nodeIds' } });

    const malformed = await bulk({ nodeIds: [nodeIds[0], nodeIds[1], 'pool_not-a-node'] });
    expect(malformed.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'nodeIds[2]' } });
    expect((await bulk({ nodeIds: [nodeIds[0]], wipe: 'quick' })).body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'wipe' } });
    expect((await bulk({ nodeIds: [nodeIds[0]], reason: '' })).body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'reason' } });
    expect((await bulk({ nodeIds: [nodeIds[0]], verb: 'deploy' })).body.error).toMatchObject({ code: 'INVALID_INPUT', details: { path: 'verb' } });

    // Nodes that are not the pool's: another pool's, nobody's, another tenant's — all alike, the first ten named.
    const [elsewhere] = await addNodes(1, otherPoolId, 'root', () => 'ready');
    await t.root.call('POST', '/v1/tenants', { id: 'bulk-other', name: 'Other' });
    const [foreign] = await addNodes(1, poolId, 'bulk-other', () => 'ready');
    const ghosts = Array.from({ length: 40 }, () => newId('node'));
    const strangers = await bulk({ nodeIds: [nodeIds[0], elsewhere, foreign, ...ghosts] });
    expect(strangers.status).toBe(404);
    expect(strangers.body.error.code).toBe('NOT_FOUND');
    expect(strangers.body.error.details).toMatchObject({ path: 'nodeIds[1]', missing: 42 });
    expect(strangers.body.error.details.nodeIds).toEqual([elsewhere, foreign, ...ghosts.slice(0, 8)]);
    expect(strangers.body.error.message).toContain(`${foreign} (nodeIds[2])`);
    expect(strangers.body.error.message).toContain('and 32 more');
    expect((await bulk({ nodeIds: [nodeIds[0]], poolId: newId('pool') })).status).toBe(404);
    expect(await t.cp.db.metalBulkRun.count()).toBe(before);

    expect((await t.root.request<ErrorBody>('GET', `/v1/metal/bulk/${newId('bulkRun')}?tenantId=root`)).body.error.code).toBe('NOT_FOUND');
    expect((await t.root.request<ErrorBody>('GET', `/v1/metal/bulk/${newId('bulkRun')}?tenantId=root&limit=1001`)).body.error).toMatchObject({
      code: 'INVALID_INPUT',
      details: { path: 'limit' },
    });
  });

  it('an idempotency key answers the same run to a retry and CONFLICT to another request under it', async () => {
    const ids = nodeIds.slice(1, 4);
    const first = await bulk({ nodeIds: ids, idempotencyKey: 'rack-7-retire' });
    // The same nodes in another order, one repeated (applied once): the same request.
    const retry = await bulk({ nodeIds: [...ids, ids[0]].reverse(), idempotencyKey: 'rack-7-retire' });
    expect(first.status).toBe(202);
    expect(retry.status).toBe(202);
    expect(retry.body.bulkId).toBe(first.body.bulkId);
    const other = await bulk({ nodeIds: ids, idempotencyKey: 'rack-7-retire', reason: 'another reason' });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'CONFLICT', details: { path: 'idempotencyKey' } });
    expect(await t.cp.db.metalBulkRun.count({ where: { idempotencyKey: 'rack-7-retire' } })).toBe(1);
    expect((await ended(first.body.bulkId)).counts).toMatchObject({ refused: 3 });
  });

  it('the CLI starts a run from a file of ids and shows it: counts, outcomes, and plain progress lines off a terminal', async () => {
    const env = { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer };
    const file = path.join(t.config.dataDir, 'bulk-nodes.txt');
    writeFileSync(file, `${nodeIds.slice(0, 5).join('\n')}\n`);
    const started = await runCli(
      ['metal', 'bulk', '--pool', poolId, '--verb', 'provide', '--nodes-file', file, '--reason', 'cli check', '--format', 'json'],
      env,
    );
    expect(started.code, started.stderr).toBe(0);
    const run = JSON.parse(started.stdout) as MetalBulkRunView;
    expect(run).toMatchObject({ verb: 'provide', total: 5, status: 'running' });
    const shown = await runCli(['metal', 'bulk', 'show', run.bulkId, '--watch', '--outcome', 'refused'], env);
    expect(shown.code, shown.stderr).toBe(0);
    // stderr is a pipe here: progress comes as timestamped lines, the last one at 100 %.
    const lines = shown.stderr.trim().split('\n');
    expect(
      lines.some((l) => /^\S+ {2}\[#{30}\] 100% 5\/5 finished/.test(l)),
      shown.stderr,
    ).toBe(true);
    expect(shown.stderr).toContain(`${run.bulkId} provide · finished · 5 nodes`);
    expect(shown.stdout).toMatch(/^NODE +OUTCOME +CODE +STATE +MESSAGE/);
    expect(shown.stdout.trim().split('\n')).toHaveLength(6); // the header, then the five refused (four deployed, one retired by the first run)
    const cancelled = await runCli(['metal', 'bulk', 'cancel', run.bulkId], env);
    expect(cancelled.code).toBe(1);
    expect(cancelled.stderr).toContain('INVALID_STATE');
  });
});
