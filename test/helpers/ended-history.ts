// A workflow's history read once its run has ended: what a test or a fixture inspects of a
// node's lifecycle, whose node state is written a workflow task before the run ends.
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

export async function historyOnceEnded(handle: WorkflowHandle): Promise<temporal.api.history.v1.IHistory> {
  await handle.result();
  return handle.fetchHistory();
}

/** The workflow tasks Temporal recorded as failed (UnhandledCommand, a nondeterminism…). */
export function failedWorkflowTasks(history: temporal.api.history.v1.IHistory): temporal.api.history.v1.IHistoryEvent[] {
  return (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes);
}
