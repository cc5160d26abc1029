// Makes sure the site's boot-lease controller workflow runs (one per site; starting it
// again while it runs is a no-op).
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { siteBootWorkflowId } from '../core/boot-lease/decide';

export async function ensureSiteBootController(temporal: Client, taskQueue: string, siteId: string): Promise<void> {
  await temporal.workflow.start('siteBoot', {
    workflowId: siteBootWorkflowId(siteId),
    taskQueue,
    args: [siteId],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
}
