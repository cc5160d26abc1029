// The metal-bulk workflow's activities: apply the run's verb to one page of its nodes (each
// through applyVerb, the single verb's path, its outcome written in the verb's own
// transaction), mark a page that could not be applied as failed, and end the run.
import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db, Tx } from '../services/db';
import { isIronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { BULK_PAGE_ATTEMPTS, type BulkPage } from '../core/metal/bulk-paging';
import { wakeLifecycle } from '../services/temporal/starters';
import { stateOf } from '../services/metal/transition';
import { applyVerb, type VerbArgs } from '../services/metal/verbs';
import { provisionVerbNamed, verbMove } from '../core/provision-states';
import type { BulkOutcome, BulkVerb } from '../core/schemas/metal';
import type { ActivityDeps } from './deps';
import { metalDeps } from './node-lifecycle';

/** The run's verb as applyVerb takes it (the state machine's name: undeploy is release). */
function argsOf(run: { verb: string; wipe: string | null }): VerbArgs {
  const verb = provisionVerbNamed(run.verb as BulkVerb);
  if (verb === 'release') return { verb, wipe: (run.wipe ?? 'quick') as Extract<VerbArgs, { verb: 'release' }>['wipe'] };
  return { verb: verb as Extract<VerbArgs, { verb: 'manage' }>['verb'] };
}

/** Messages are operator-facing and bounded (a node's error can quote what a peer sent). */
const clip = (text: string) => (text.length > 1024 ? `${text.slice(0, 1023)}…` : text);

/** Decides a node still pending, once: false when something else (a cancel) decided it first. */
async function decideNode(
  db: Db | Tx,
  bulkId: string,
  seq: number,
  outcome: Exclude<BulkOutcome, 'pending'>,
  error?: { code: string; message: string },
): Promise<boolean> {
  const updated = await db.metalBulkOutcome.updateMany({
    where: { bulkId, seq, outcome: 'pending' },
    data: { outcome, code: error?.code ?? null, message: error ? clip(error.message) : null, decidedAt: new Date() },
  });
  return updated.count === 1;
}

/** Thrown inside the verb's transaction to roll the move back: the node was decided meanwhile. */
class AlreadyDecided extends Error {}

/**
 * The page's nodes the state table refuses as they are now, with the refusal applyVerb would
 * give (the same verbMove): those need no transaction each. Every other node goes through
 * applyVerb, which checks again and may refuse for more reasons.
 */
async function refusedByState(
  db: Db,
  tenantId: string,
  rows: Array<{ seq: number; nodeId: string }>,
  args: VerbArgs,
): Promise<Map<number, { code: string; message: string }>> {
  const nodes = await db.node.findMany({ where: { id: { in: rows.map((r) => r.nodeId) }, tenantId, deletedAt: null, provisionState: { not: null } } });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const refused = new Map<number, { code: string; message: string }>();
  for (const row of rows) {
    const node = byId.get(row.nodeId);
    if (!node) continue; // gone: applyVerb says how
    try {
      verbMove(args.verb, stateOf(node));
    } catch (err) {
      if (!isIronflowError(err)) throw err;
      refused.set(row.seq, { code: err.code, message: err.message });
    }
  }
  return refused;
}

/** Records refusals in one transaction, one statement per distinct refusal (a page's are mostly alike). */
async function recordRefusals(db: Db, bulkId: string, refused: Map<number, { code: string; message: string }>): Promise<number> {
  const groups = new Map<string, { error: { code: string; message: string }; seqs: number[] }>();
  for (const [seq, error] of refused) {
    const key = `${error.code}\u0000${error.message}`;
    const group = groups.get(key) ?? { error, seqs: [] };
    group.seqs.push(seq);
    groups.set(key, group);
  }
  const decidedAt = new Date();
  const counts = await db.$transaction(
    [...groups.values()].map((g) =>
      db.metalBulkOutcome.updateMany({
        where: { bulkId, seq: { in: g.seqs }, outcome: 'pending' },
        data: { outcome: 'refused', code: g.error.code, message: clip(g.error.message), decidedAt },
      }),
    ),
  );
  return counts.reduce((sum, c) => sum + c.count, 0);
}

export interface PageResult {
  accepted: number;
  refused: number;
  failed: number;
  /** The run was cancelled before or while this page ran. */
  stopped: boolean;
}

export interface BulkFinish {
  bulkId: string;
  /** Nodes still pending end cancelled. */
  cancelled: boolean;
}

export function createMetalBulkActivities(deps: ActivityDeps) {
  const metal = metalDeps(deps);
  const findRun = async (bulkId: string) => {
    const run = await deps.db.metalBulkRun.findUnique({ where: { id: bulkId } });
    if (!run) throw ApplicationFailure.nonRetryable(`bulk run ${bulkId} does not exist`, 'NOT_FOUND');
    return run;
  };

  return {
    /** How many nodes the run has, and whether a cancel was asked (a signal can be missed; the row is not). */
    async metalBulkPlan(bulkId: string): Promise<{ total: number; cancelRequested: boolean; status: string }> {
      const run = await findRun(bulkId);
      return { total: run.total, cancelRequested: run.cancelRequestedAt !== null, status: run.status };
    },

    async metalBulkApplyPage(page: BulkPage): Promise<PageResult> {
      const context = Context.current();
      const run = await findRun(page.bulkId);
      const result: PageResult = { accepted: 0, refused: 0, failed: 0, stopped: false };
      if (run.cancelRequestedAt || run.status !== 'running') return { ...result, stopped: true };
      const args = argsOf(run);
      const lastAttempt = context.info.attempt >= BULK_PAGE_ATTEMPTS;
      if (context.info.attempt > 1) {
        // An earlier attempt may have committed a move and died before waking the lifecycle: a wake is idempotent.
        const accepted = await deps.db.metalBulkOutcome.findMany({
          where: { bulkId: run.id, seq: { gte: page.fromSeq, lt: page.toSeq }, outcome: 'accepted' },
          select: { nodeId: true },
        });
        const nodes = await deps.db.node.findMany({ where: { id: { in: accepted.map((a) => a.nodeId) } } });
        for (const node of nodes) await wakeLifecycle(deps.temporal, deps.config.controlQueue, node);
      }
      const pending = await deps.db.metalBulkOutcome.findMany({
        where: { bulkId: run.id, seq: { gte: page.fromSeq, lt: page.toSeq }, outcome: 'pending' },
        orderBy: { seq: 'asc' },
      });
      const refused = await refusedByState(deps.db, run.tenantId, pending, args);
      result.refused += await recordRefusals(deps.db, run.id, refused);
      for (const row of pending) {
        if (refused.has(row.seq)) continue;
        // A cancel reaches us through the heartbeat: stop between nodes, never inside one.
        if (context.cancellationSignal.aborted) throw new CancelledFailure('the bulk run was cancelled');
        context.heartbeat(row.seq);
        try {
          await applyVerb(metal, { tenantId: run.tenantId, nodeId: row.nodeId, poolId: run.poolId }, args, async (tx) => {
            if (!(await decideNode(tx, run.id, row.seq, 'accepted'))) throw new AlreadyDecided();
          });
          result.accepted += 1;
        } catch (err) {
          if (err instanceof AlreadyDecided) continue;
          if (isIronflowError(err)) {
            if (await decideNode(deps.db, run.id, row.seq, 'refused', { code: err.code, message: err.message })) result.refused += 1;
            continue;
          }
          if (!lastAttempt) throw err; // the page is retried from the nodes still pending
          if (await decideNode(deps.db, run.id, row.seq, 'failed', { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) }))
            result.failed += 1;
        }
      }
      return result;
    },

    /** A page whose activity gave up (every attempt failed): its nodes still pending are failed with why. */
    async metalBulkFailPage(input: BulkPage & { error: { code: string; message: string } }): Promise<number> {
      const updated = await deps.db.metalBulkOutcome.updateMany({
        where: { bulkId: input.bulkId, seq: { gte: input.fromSeq, lt: input.toSeq }, outcome: 'pending' },
        data: { outcome: 'failed', code: input.error.code, message: clip(input.error.message), decidedAt: new Date() },
      });
      return updated.count;
    },

    /** Ends the run: counts written, finishedAt set, one event. A second call (a retry) changes nothing. */
    async metalBulkFinish(input: BulkFinish): Promise<{ status: string; counts: Record<string, number> }> {
      return deps.db.$transaction(async (tx) => {
        const run = await tx.metalBulkRun.findUnique({ where: { id: input.bulkId } });
        if (!run) throw ApplicationFailure.nonRetryable(`bulk run ${input.bulkId} does not exist`, 'NOT_FOUND');
        if (run.status !== 'running')
          return { status: run.status, counts: { accepted: run.accepted, refused: run.refused, failed: run.failed, cancelled: run.cancelled } };
        const now = new Date();
        if (input.cancelled)
          await tx.metalBulkOutcome.updateMany({ where: { bulkId: run.id, outcome: 'pending' }, data: { outcome: 'cancelled', decidedAt: now } });
        const groups = await tx.metalBulkOutcome.groupBy({ by: ['outcome'], where: { bulkId: run.id }, _count: { _all: true } });
        const count = (o: BulkOutcome) => groups.find((g) => g.outcome === o)?._count._all ?? 0;
        if (count('pending') > 0) throw new Error(`bulk run ${run.id}: ${count('pending')} nodes are still pending at its end`);
        const counts = { accepted: count('accepted'), refused: count('refused'), failed: count('failed'), cancelled: count('cancelled') };
        const status = input.cancelled ? 'cancelled' : 'finished';
        await tx.metalBulkRun.update({ where: { id: run.id }, data: { ...counts, status, finishedAt: now } });
        await appendEvent(tx, {
          tenantId: run.tenantId,
          type: `metal.bulk.${status}`,
          subjectId: run.id,
          data: { poolId: run.poolId, verb: run.verb, total: run.total, ...counts },
        });
        return { status, counts };
      });
    },
  };
}
export type MetalBulkActivities = ReturnType<typeof createMetalBulkActivities>;
