// Every workflow id the control plane gives a workflow, worded once. Ids are stable
// names (tctl, the Web UI and the node rows use them), so their formats never change.
// The lifecycle's id lives in core/ because workflow code reads it too.
export { lifecycleWorkflowId } from '../../core/metal/lifecycle-client';

/** A state's (or a profile run's) provision workflow: `node:<nodeId>:<state>:<n>`, n counting from 1. */
export const stateWorkflowId = (nodeId: string, state: string, n: number): string => `node:${nodeId}:${state}:${n}`;

/** Whether the id names a provision workflow of this node (for a workflow that carries no NodeId search attribute). */
export const isStateWorkflowOf = (workflowId: string, nodeId: string): boolean => workflowId.startsWith(`node:${nodeId}:`);

/** A metal bulk run's one workflow. */
export const bulkWorkflowId = (bulkId: string): string => `metal-bulk:${bulkId}`;

/** The singleton controller workflow of a site's boot lease. */
export const siteBootWorkflowId = (siteId: string): string => `site-boot:${siteId}`;

/** The wiring check's workflow (`ironflow status --check`). */
export const systemCheckWorkflowId = (checkId: string): string => `system-check:${checkId}`;
