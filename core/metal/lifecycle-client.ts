// A node's lifecycle workflow id (`node:<nodeId>`): named here, in the pure domain, because
// workflow code reads it too. services/temporal/starters.ts wakes the lifecycle.

export const LIFECYCLE_WORKFLOW_ID_PREFIX = 'node:';
export const lifecycleWorkflowId = (nodeId: string): string => `${LIFECYCLE_WORKFLOW_ID_PREFIX}${nodeId}`;
