// metal.bulk: one verb on up to 10,000 nodes of one pool. The request is checked whole (every
// node a metal node of the pool and tenant), recorded as a run (blk_…) with one pending
// outcome per node, and handed to ONE workflow (workflows/metal-bulk.ts) that applies the verb
// to each node through applyVerb, as a single verb would; the answer comes at once. The run
// is what the destructive-batch quorum attaches to, and its reason what approvers read.
import type { Client } from '@temporalio/client';
import type { MetalBulkRun } from '../../generated/prisma-sqlite/client';
import { isUniqueViolation, type Db, type DbOrTx } from '../db';
import { IronflowError, notFound } from '../../core/errors';
import { appendEvent } from '../events';
import { derivedId, newId } from '../ids';
import { findOwnedPool } from '../../core/pools/pool-lookup';
import { requestHash } from '../request-hash';
import type { BulkOutcome, MetalBulkInput, MetalBulkPage, MetalBulkRunView } from '../../core/schemas/metal';
import { bulkOutcomes } from '../../core/schemas/metal';
import { cancelMetalBulk } from '../temporal/senders';
import { startMetalBulk } from '../temporal/starters';
import { bulkWorkflowId } from '../temporal/workflow-ids';

export interface BulkDeps {
  db: Db;
  temporal: Client;
  controlQueue: string;
  /** Asks for the run's destructive-batch quorum batch (docs/quorum.md) before any node moves; the nodes' workflows wait for it. */
  requestQuorumBatch?: (run: MetalBulkRun, nodeIds: string[]) => Promise<void>;
}

/** Ids per `IN (…)` list: within SQLite's bound-parameter limit (999 in the build Prisma's adapter reports). */
const CHUNK = 500;
/** How many offending ids a refusal names (the count says how many more). */
const NAMED_IDS = 10;

const chunks = <T>(items: T[]): T[][] => Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

/** Refuses the request unless every id is a live metal node of the tenant's pool (another tenant's node reads as no node). */
async function checkMembers(db: Db, input: MetalBulkInput, nodeIds: string[]): Promise<void> {
  const members = new Set<string>();
  const ofPool = { tenantId: input.tenantId, poolId: input.poolId, deletedAt: null, provisionState: { not: null } };
  if (nodeIds.length > CHUNK) {
    // Many ids: one read of the pool's node ids (by its index) beats many IN lists.
    for (const row of await db.node.findMany({ where: ofPool, select: { id: true } })) members.add(row.id);
  } else {
    for (const row of await db.node.findMany({ where: { id: { in: nodeIds }, ...ofPool }, select: { id: true } })) members.add(row.id);
  }
  const missing = nodeIds.flatMap((id) => (members.has(id) ? [] : [{ id, at: input.nodeIds.indexOf(id) }]));
  if (missing.length === 0) return;
  const named = missing.slice(0, NAMED_IDS);
  const more = missing.length > named.length ? ` and ${missing.length - named.length} more` : '';
  throw new IronflowError(
    'NOT_FOUND',
    `nodeIds: ${missing.length} of ${nodeIds.length} are not metal nodes of pool ${input.poolId}: ${named.map((m) => `${m.id} (nodeIds[${m.at}])`).join(', ')}${more}; nothing was applied`,
    { path: `nodeIds[${named[0]?.at}]`, nodeIds: named.map((m) => m.id), missing: missing.length },
  );
}

type Counts = Record<BulkOutcome, number>;
const zeroCounts = (): Counts => Object.fromEntries(bulkOutcomes.map((o) => [o, 0])) as Counts;

/** A running run's counts come from its outcomes; a finished one's were written when it ended. */
async function countsOf(db: DbOrTx, run: MetalBulkRun): Promise<Counts> {
  const counts = zeroCounts();
  if (run.status !== 'running') return { ...counts, accepted: run.accepted, refused: run.refused, failed: run.failed, cancelled: run.cancelled };
  const groups = await db.metalBulkOutcome.groupBy({ by: ['outcome'], where: { bulkId: run.id }, _count: { _all: true } });
  for (const g of groups) counts[g.outcome as BulkOutcome] = g._count._all;
  return counts;
}

export async function bulkRunView(db: DbOrTx, run: MetalBulkRun): Promise<MetalBulkRunView> {
  return {
    bulkId: run.id,
    tenantId: run.tenantId,
    poolId: run.poolId,
    verb: run.verb as MetalBulkRunView['verb'],
    wipe: run.wipe,
    reason: run.reason,
    actorId: run.actorId,
    status: run.status as MetalBulkRunView['status'],
    total: run.total,
    counts: await countsOf(db, run),
    workflowId: run.workflowId,
    cancelRequestedAt: run.cancelRequestedAt?.toISOString() ?? null,
    createdAt: run.createdAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
  };
}

export async function startBulk(deps: BulkDeps, actorId: string, input: MetalBulkInput): Promise<{ run: MetalBulkRunView; created: boolean }> {
  await findOwnedPool(deps.db, input.tenantId, input.poolId);
  const nodeIds = [...new Set(input.nodeIds)];
  const hash = requestHash({ poolId: input.poolId, verb: input.verb, wipe: input.wipe, reason: input.reason, nodeIds: [...nodeIds].sort() });
  const id = input.idempotencyKey ? derivedId('bulkRun', input.tenantId, input.idempotencyKey) : newId('bulkRun');

  const replay = async (existing: MetalBulkRun) => {
    if (existing.tenantId !== input.tenantId || existing.requestHash !== hash) {
      throw new IronflowError('CONFLICT', `idempotency key ${input.idempotencyKey} was used for a different bulk request (${existing.id}); use a new key`, {
        path: 'idempotencyKey',
        bulkId: existing.id,
      });
    }
    if (existing.status === 'running') await startMetalBulk(deps.temporal, deps.controlQueue, existing); // the first answer may have been lost before the start
    return { run: await bulkRunView(deps.db, existing), created: false };
  };
  if (input.idempotencyKey) {
    const existing = await deps.db.metalBulkRun.findUnique({ where: { id } });
    if (existing) return replay(existing);
  }

  await checkMembers(deps.db, input, nodeIds);
  let run: MetalBulkRun;
  try {
    run = await deps.db.$transaction(async (tx) => {
      const created = await tx.metalBulkRun.create({
        data: {
          id,
          tenantId: input.tenantId,
          poolId: input.poolId,
          verb: input.verb,
          wipe: input.verb === 'undeploy' ? (input.wipe ?? 'quick') : null,
          reason: input.reason,
          actorId,
          idempotencyKey: input.idempotencyKey ?? null,
          requestHash: hash,
          workflowId: bulkWorkflowId(id),
          status: 'running',
          total: nodeIds.length,
        },
      });
      // Prisma splits the insert into statements within the database's parameter limit (not so an IN list).
      await tx.metalBulkOutcome.createMany({ data: nodeIds.map((nodeId, seq) => ({ bulkId: id, seq, nodeId, outcome: 'pending' })) });
      return created;
    });
  } catch (err) {
    if (!input.idempotencyKey || !isUniqueViolation(err)) throw err;
    const winner = await deps.db.metalBulkRun.findUnique({ where: { id } });
    if (!winner) throw err;
    return replay(winner);
  }
  try {
    await deps.requestQuorumBatch?.(run, nodeIds);
    await startMetalBulk(deps.temporal, deps.controlQueue, run);
  } catch (err) {
    // Nothing runs it: the run is not left behind as if it would (a retry records it anew).
    await deps.db.$transaction([deps.db.metalBulkOutcome.deleteMany({ where: { bulkId: id } }), deps.db.metalBulkRun.delete({ where: { id } })]);
    throw err;
  }
  await appendEvent(deps.db, {
    tenantId: input.tenantId,
    type: 'metal.bulk.started',
    subjectId: id,
    data: { poolId: input.poolId, verb: input.verb, wipe: run.wipe, nodes: nodeIds.length, reason: input.reason, actorId, workflowId: run.workflowId },
  });
  return { run: await bulkRunView(deps.db, run), created: true };
}

export async function findBulkRun(db: DbOrTx, tenantId: string, bulkId: string): Promise<MetalBulkRun> {
  const run = await db.metalBulkRun.findFirst({ where: { id: bulkId, tenantId } });
  if (!run) throw notFound('metal bulk run', bulkId);
  return run;
}

export interface BulkPageQuery {
  tenantId: string;
  bulkId: string;
  outcome?: BulkOutcome;
  limit: number;
  cursor?: number;
}

/** The run, its counts and one page of its nodes' outcomes (in request order), each with the node's state now. */
export async function readBulkPage(db: Db, q: BulkPageQuery): Promise<MetalBulkPage> {
  const run = await findBulkRun(db, q.tenantId, q.bulkId);
  const rows = await db.metalBulkOutcome.findMany({
    where: { bulkId: run.id, ...(q.outcome ? { outcome: q.outcome } : {}), ...(q.cursor !== undefined ? { seq: { gt: q.cursor } } : {}) },
    orderBy: { seq: 'asc' },
    take: q.limit + 1,
  });
  const page = rows.slice(0, q.limit);
  const stateOf = new Map<string, string | null>();
  for (const chunk of chunks(page.map((r) => r.nodeId))) {
    const nodes = await db.node.findMany({ where: { id: { in: chunk }, tenantId: run.tenantId }, select: { id: true, provisionState: true } });
    for (const n of nodes) stateOf.set(n.id, n.provisionState);
  }
  return {
    ...(await bulkRunView(db, run)),
    outcomes: page.map((r) => ({
      seq: r.seq,
      nodeId: r.nodeId,
      outcome: r.outcome as BulkOutcome,
      error: r.code ? { code: r.code, message: r.message ?? '' } : null,
      decidedAt: r.decidedAt?.toISOString() ?? null,
      provisionState: stateOf.get(r.nodeId) ?? null,
    })),
    nextCursor: rows.length > q.limit ? String(page[page.length - 1]?.seq) : null,
  };
}

/**
 * Asks the run to stop: nodes not yet decided end cancelled; nodes already accepted keep their
 * chains (cancel them node by node with metal abort). The flag is in the row too, so a page
 * that starts after it stops even if the signal is lost.
 */
export async function cancelBulk(deps: BulkDeps, tenantId: string, bulkId: string, actorId: string): Promise<MetalBulkRunView> {
  const run = await findBulkRun(deps.db, tenantId, bulkId);
  if (run.status !== 'running')
    throw new IronflowError('INVALID_STATE', `bulk run ${bulkId} is already ${run.status}; nothing to cancel`, { status: run.status });
  if (!run.cancelRequestedAt) {
    await deps.db.$transaction(async (tx) => {
      await tx.metalBulkRun.updateMany({ where: { id: bulkId, status: 'running', cancelRequestedAt: null }, data: { cancelRequestedAt: new Date() } });
      await appendEvent(tx, { tenantId, type: 'metal.bulk.cancel-requested', subjectId: bulkId, data: { actorId } });
    });
  }
  await cancelMetalBulk(deps.temporal, run.workflowId); // a run that ended meanwhile: its row says how
  return bulkRunView(deps.db, await findBulkRun(deps.db, tenantId, bulkId));
}
