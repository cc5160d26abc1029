// How the metal-bulk workflow walks a run: pages of nodes (one activity each, heartbeating
// per node), a few pages at once, and a fresh history every so many pages. Pure data: the
// workflow bundle imports it.

/** Nodes per page activity: small enough that a retried page redoes little, large enough that 10,000 nodes are 100 activities. */
export const BULK_PAGE_SIZE = 100;
/** Pages applied at once: bounds the load a bulk puts on the database and Temporal. */
export const BULK_PAGES_IN_FLIGHT = 4;
/** Pages per workflow run before continue-as-new (10,000 nodes: four runs of ~100 history events each). */
export const BULK_PAGES_PER_RUN = 25;
/** A page's attempts; on the last one a node whose verb errors (no refusal) is recorded as failed instead of retried. */
export const BULK_PAGE_ATTEMPTS = 5;

export const BULK_CANCEL_SIGNAL = 'cancel';

export interface BulkPage {
  bulkId: string;
  /** The places [fromSeq, toSeq) of the run's nodes. */
  fromSeq: number;
  toSeq: number;
}
