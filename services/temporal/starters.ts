// Every workflow the control plane starts, by its function (never by name), with its id,
// search attributes and what the Web UI shows of it.
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { Plan, ProvisionTarget } from '../../core/plan';
import { CURRENT_PATCH_LEVEL } from '../../core/workflow-patches';
import { lifecycleSummary, planDetails, provisionSummary } from '../../core/workflow-summaries';
import { metalBulk, nodeLifecycle, provision, siteBoot, systemCheck } from '../../workflows';
import { wakeSignal } from '../../workflows/node-lifecycle';
import { lifecycleAttributes, provisionRunAttributes, tenantAttributes } from './search-attributes';
import { lifecycleWorkflowId, siteBootWorkflowId, systemCheckWorkflowId } from './workflow-ids';

/**
 * Starts `provision(plan, target, patchLevel)` under `workflowId`; answers its first run id, or null when
 * the id is taken (by a run now or one that ended: an id names one run, ever).
 */
export async function startProvisionRun(
  client: Client,
  taskQueue: string,
  run: { workflowId: string; plan: Plan; target: ProvisionTarget },
): Promise<string | null> {
  const { workflowId, plan, target } = run;
  try {
    const handle = await client.workflow.start(provision, {
      workflowId,
      taskQueue,
      args: [plan, target, CURRENT_PATCH_LEVEL],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: provisionRunAttributes({ ...target, profileRef: plan.profile.ref }),
      memo: { profile: plan.profile.ref, profileTenant: plan.profile.tenantId },
      staticSummary: provisionSummary({ nodeId: target.nodeId, state: target.provisionState, profileRef: plan.profile.ref, siteId: target.siteId }),
      staticDetails: planDetails(plan),
    });
    return handle.firstExecutionRunId;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return null;
    throw err;
  }
}

/** Starts a metal bulk run's workflow; a run whose workflow was started already (a retried request) is left as it is. */
export async function startMetalBulk(
  client: Client,
  taskQueue: string,
  run: { id: string; workflowId: string; tenantId: string; verb: string; total: number; poolId: string },
): Promise<void> {
  try {
    await client.workflow.start(metalBulk, {
      workflowId: run.workflowId,
      taskQueue,
      args: [{ bulkId: run.id, nextSeq: 0 }],
      typedSearchAttributes: tenantAttributes(run.tenantId),
      staticSummary: `metal bulk ${run.verb} · ${run.total} nodes · pool ${run.poolId}`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** Makes sure the site's boot-lease controller runs (one per site; starting it again while it runs is a no-op). */
export async function ensureSiteBootController(client: Client, taskQueue: string, siteId: string): Promise<void> {
  await client.workflow.start(siteBoot, {
    workflowId: siteBootWorkflowId(siteId),
    taskQueue,
    args: [siteId],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
}

/** Starts the wiring check that writes the check's row from the control-plane worker. */
export async function startSystemCheck(client: Client, taskQueue: string, check: { checkId: string; tenantId: string }): Promise<void> {
  await client.workflow.start(systemCheck, {
    workflowId: systemCheckWorkflowId(check.checkId),
    taskQueue,
    args: [{ checkId: check.checkId }],
    typedSearchAttributes: tenantAttributes(check.tenantId),
  });
}

interface LifecycleNode {
  id: string;
  tenantId: string;
  siteId: string;
  provisionState: string | null;
}

/**
 * Wakes the node's lifecycle (`node:<id>`) after a verb: signal-with-start, so it runs whether
 * or not it was running. The workflow is level-triggered: the wake-up says only "look again".
 */
export async function wakeLifecycle(client: Client, taskQueue: string, node: LifecycleNode): Promise<void> {
  await client.workflow.signalWithStart(nodeLifecycle, {
    workflowId: lifecycleWorkflowId(node.id),
    taskQueue,
    args: [{ nodeId: node.id, patchLevel: CURRENT_PATCH_LEVEL }],
    signal: wakeSignal,
    signalArgs: [],
    staticSummary: lifecycleSummary({ nodeId: node.id, siteId: node.siteId }),
    typedSearchAttributes: lifecycleAttributes(node),
  });
}
