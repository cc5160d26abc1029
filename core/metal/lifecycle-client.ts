// Waking a node's lifecycle workflow (`node:<nodeId>`) after a verb: signal-with-start, so
// it runs whether or not it was running. The workflow is level-triggered: the wake-up says
// only "look again".
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { searchAttributeKeys } from '../search-attributes';
import { lifecycleSummary } from '../workflow-summaries';

export const LIFECYCLE_WORKFLOW_ID_PREFIX = 'node:';
export const lifecycleWorkflowId = (nodeId: string): string => `${LIFECYCLE_WORKFLOW_ID_PREFIX}${nodeId}`;
export const LIFECYCLE_WORKFLOW = 'nodeLifecycle';
export const WAKE_SIGNAL = 'wake';

export interface LifecycleNode {
  id: string;
  tenantId: string;
  siteId: string;
  provisionState: string | null;
}

export async function wakeLifecycle(temporal: Client, controlQueue: string, node: LifecycleNode): Promise<void> {
  await temporal.workflow.signalWithStart(LIFECYCLE_WORKFLOW, {
    workflowId: lifecycleWorkflowId(node.id),
    taskQueue: controlQueue,
    args: [{ nodeId: node.id }],
    signal: WAKE_SIGNAL,
    signalArgs: [],
    staticSummary: lifecycleSummary({ nodeId: node.id, siteId: node.siteId }),
    typedSearchAttributes: new TypedSearchAttributes([
      { key: searchAttributeKeys.NodeId, value: node.id },
      { key: searchAttributeKeys.SiteId, value: node.siteId },
      { key: searchAttributeKeys.TenantId, value: node.tenantId },
      { key: searchAttributeKeys.ProvisionState, value: node.provisionState ?? '' },
    ]),
  });
}
