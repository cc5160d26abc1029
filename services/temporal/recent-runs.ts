// Whether a workflow's run runs now, remembered for a moment per run. A site agent's step asks
// several times a second: its BMC access, then the operation ledger's read and two writes for
// every BMC command (services/bmc-access.ts), and each ask was a DescribeWorkflowExecution
// through the Temporal server: about 60 a machine over a fleet's cycle, as many as its workflow
// task completions (bench/README.md). The step names its run, so only an answer about that run
// is reused: a new run started under the same workflow id is never taken for it. Only "it
// runs" is remembered, for RECENTLY_RUNNING_MS: the run may have ended that long before it is
// refused, while an agent granted that run's BMC credentials holds them for its step anyway.
// The gateway reuses an accepted certificate's verdict as long (gateway/agent-identities.ts).
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { RecentCache } from '../../core/recent-cache';
import { describeRun } from './readers';

export const RECENTLY_RUNNING_MS = 2_000;
/** Bounds the memory: a fleet's busiest seconds ask about far fewer runs than this. */
const REMEMBERED_MAX = 10_000;

/** What is kept of a running run's description: its run id and search attributes. */
export type RunningRun = Pick<WorkflowExecutionDescription, 'runId' | 'typedSearchAttributes'>;

/** Per Temporal client, by `workflowId/runId`, each answer and when it expires. */
const rememberedByClient = new WeakMap<Client, RecentCache<string, { run: RunningRun; until: number }>>();

/** The workflow's current run when Temporal, asked now, says it runs, else null. */
export async function runningNow(client: Client, workflowId: string): Promise<RunningRun | null> {
  const description = await describeRun(client, workflowId);
  return description?.status.name === 'RUNNING' ? { runId: description.runId, typedSearchAttributes: description.typedSearchAttributes } : null;
}

/** The run when it is the workflow's current run and runs now (as Temporal said at most RECENTLY_RUNNING_MS ago), else null. */
export async function recentlyRunning(client: Client, workflowId: string, runId: string): Promise<RunningRun | null> {
  let remembered = rememberedByClient.get(client);
  if (!remembered) rememberedByClient.set(client, (remembered = new RecentCache(REMEMBERED_MAX)));
  const key = `${workflowId}/${runId}`;
  const known = remembered.get(key);
  if (known && known.until > Date.now()) return known.run;
  remembered.delete(key);
  const run = await runningNow(client, workflowId);
  if (run?.runId !== runId) return null;
  remembered.set(key, { run, until: Date.now() + RECENTLY_RUNNING_MS });
  return run;
}
