// What the control plane reads of a workflow: Temporal's description, the provision
// workflow's own `status` query, and the node's running provision runs.
import { WorkflowFailedError, WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { ProvisionResult, ProvisionStatus } from '../../core/plan';
import type { StateWorkflowEnded } from '../../workflows/lifecycle-handles';
import { provision } from '../../workflows';
import { statusQuery } from '../../workflows/provision-handles';
import { searchAttributeKeys } from '../../core/search-attributes';

/** Temporal's description of the workflow's latest run, or null when there is none (never started, or retention dropped it). */
export async function describeRun(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | null> {
  try {
    return await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

/** When the workflow's latest run started (the run an outcome is about runs now: no run is Temporal's WorkflowNotFoundError). */
export const runStartTime = async (client: Client, workflowId: string): Promise<Date> => (await client.workflow.getHandle(workflowId).describe()).startTime;

/** Whether a described workflow is a provision run (a workflow of another type under a guessed id is not). */
export const isProvisionRun = (description: WorkflowExecutionDescription): boolean => description.type === provision.name;

/**
 * The provision run's `status` query, or null when no worker answers (within `deadlineMs`
 * when given): Temporal's description still says what it knows.
 */
export async function queryProvisionStatus(client: Client, workflowId: string, options: { deadlineMs?: number } = {}): Promise<ProvisionStatus | null> {
  const ask = () => client.workflow.getHandle(workflowId).query(statusQuery);
  try {
    return options.deadlineMs === undefined ? await ask() : await client.withDeadline(Date.now() + options.deadlineMs, ask);
  } catch {
    return null;
  }
}

/** A visibility query for the node's running provision runs. */
function runningProvisionRunsQuery(nodeId: string): string {
  const quoted = nodeId.replace(/["\\]/g, '');
  return `${searchAttributeKeys.NodeId.name} = "${quoted}" AND WorkflowType = "${provision.name}" AND ExecutionStatus = "Running"`;
}

/** The ids of the node's running provision runs, at most `limit`. */
export async function runningProvisionRuns(client: Client, nodeId: string, limit: number): Promise<string[]> {
  const running: string[] = [];
  for await (const workflow of client.workflow.list({ query: runningProvisionRunsQuery(nodeId) })) {
    running.push(workflow.workflowId);
    if (running.length >= limit) break;
  }
  return running;
}

export type PendingActivity = NonNullable<WorkflowExecutionDescription['raw']['pendingActivities']>[number];

/** A running activity's last heartbeat details (its progress: bytes written, disks wiped …), decoded with the client's data converter (sealed histories). */
export async function lastHeartbeat(client: Client, activity: PendingActivity): Promise<unknown> {
  const payloads = activity.heartbeatDetails?.payloads;
  return payloads?.[0] ? decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, payloads) : null;
}

/** A state workflow's end as its lifecycle applies it, or null while it runs (one look: for a child an earlier lifecycle run started). */
export async function stateWorkflowEnd(client: Client, workflowId: string): Promise<StateWorkflowEnded | null> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    if ((await handle.describe()).status.name === 'RUNNING') return null;
    const result = (await handle.result()) as ProvisionResult;
    return { workflowId, outcome: 'succeeded', outputs: result.outputs ?? {} };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      return {
        workflowId,
        outcome: 'failed',
        error: { code: 'NOT_FOUND', message: `state workflow ${workflowId} not found (never started, or past retention)` },
      };
    if (!(err instanceof WorkflowFailedError)) throw err;
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) return { workflowId, outcome: 'failed', error: { code: cause.type ?? 'INTERNAL', message: cause.message } };
    const code = cause instanceof CancelledFailure ? 'ABORTED' : 'INTERNAL';
    return { workflowId, outcome: 'failed', error: { code, message: cause?.message || err.message } };
  }
}
