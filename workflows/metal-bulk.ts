// `metal-bulk:<blk_id>`: applies a bulk run's verb to its nodes (services/metal/bulk.ts records
// the run). Pages of nodes, a few at once, each an activity that heartbeats per node; a
// fresh history (continue-as-new) every BULK_PAGES_PER_RUN pages, carrying only the next
// place, since every outcome is in the database. The `cancel` signal (or a Temporal cancel)
// stops it between nodes: what was not decided ends cancelled. It ends when every node is
// decided (accepted, refused, failed or cancelled): an accepted node's chain is its own
// lifecycle's to run, and the run's page shows where each has got to.
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { MetalBulkActivities } from '../activities/metal-bulk';
import { BULK_CANCEL_SIGNAL, BULK_PAGE_ATTEMPTS, BULK_PAGE_SIZE, BULK_PAGES_IN_FLIGHT, BULK_PAGES_PER_RUN } from '../core/metal/bulk-paging';

const acts = proxyActivities<Omit<MetalBulkActivities, 'metalBulkApplyPage'>>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, maximumInterval: '10 seconds', nonRetryableErrorTypes: ['NOT_FOUND'] },
});
const pages = proxyActivities<Pick<MetalBulkActivities, 'metalBulkApplyPage'>>({
  startToCloseTimeout: '10 minutes',
  // Also how soon a cancel reaches a running page (heartbeats are sent at most every 0.8 × this).
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: BULK_PAGE_ATTEMPTS, maximumInterval: '10 seconds', nonRetryableErrorTypes: ['NOT_FOUND'] },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export const bulkCancelSignal = defineSignal<[]>(BULK_CANCEL_SIGNAL);

export interface MetalBulkInput {
  bulkId: string;
  /** The first place not yet handed to a page (0 at the start; carried over continue-as-new). */
  nextSeq: number;
}

function failureOf(err: unknown): { code: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'INTERNAL', message: cause.message };
  return { code: 'INTERNAL', message: cause instanceof Error ? cause.message : String(cause) };
}

export async function metalBulk(input: MetalBulkInput): Promise<{ status: string; counts: Record<string, number> }> {
  const { bulkId } = input;
  const scope = new CancellationScope();
  let cancelled = false;
  const cancel = () => {
    cancelled = true;
    scope.cancel();
  };
  setHandler(bulkCancelSignal, cancel);

  const plan = await acts.metalBulkPlan(bulkId);
  if (plan.cancelRequested) cancelled = true;

  const running = new Map<number, Promise<void>>();
  const launch = (fromSeq: number) => {
    const page = { bulkId, fromSeq, toSeq: Math.min(fromSeq + BULK_PAGE_SIZE, plan.total) };
    const done = scope
      .run(() => pages.metalBulkApplyPage(page))
      .then(
        (result) => void (result.stopped && (cancelled = true)),
        async (err: unknown) => {
          // A cancellation (ours, or the workflow's from Temporal) stops the run; anything else fails the page's undecided nodes.
          if (isCancellation(err)) return void (cancelled = true);
          await CancellationScope.nonCancellable(() => acts.metalBulkFailPage({ ...page, error: failureOf(err) }));
        },
      )
      .finally(() => running.delete(fromSeq));
    running.set(fromSeq, done);
  };

  let next = input.nextSeq;
  let launched = 0;
  try {
    while (next < plan.total && !cancelled && launched < BULK_PAGES_PER_RUN && !workflowInfo().continueAsNewSuggested) {
      if (running.size >= BULK_PAGES_IN_FLIGHT) {
        await Promise.race(running.values());
        continue;
      }
      launch(next);
      next += BULK_PAGE_SIZE;
      launched += 1;
    }
    await Promise.all(running.values());
  } catch (err) {
    if (!isCancellation(err)) throw err;
    cancelled = true; // the workflow itself was cancelled (Temporal cancel): end the run as cancelled
  }
  if (!cancelled && next < plan.total) await continueAsNew<typeof metalBulk>({ bulkId, nextSeq: next });
  return CancellationScope.nonCancellable(() => acts.metalBulkFinish({ bulkId, cancelled }));
}
