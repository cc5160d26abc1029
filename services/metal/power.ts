// metal.power: the power axis only, never a state move. Legal in every state but those whose
// workflow drives the power. The verb records what was asked (node.power is the last
// requested power, not a BMC reading) and the run that will do it (node.powerWorkflowId), and
// the caller starts that metal-power-<action> run, which does it through the site agent's BMC
// driver. One power run at a time per node, as Ironic's node lock has it: two runs at once
// would reach the BMC in either order, and the machine could end up other than node.power says.
import type { Client } from '@temporalio/client';
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Db } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { checkPowerAllowed } from '../../core/provision-states';
import { describeRun } from '../temporal/readers';
import { stateWorkflowId } from '../temporal/workflow-ids';
import { nextRunNumber } from '../run-numbers';
import { updateNodeAtVersion } from './node-writes';
import { checkVersion, findMetalNode } from './transition';

/** The state a power run's id carries: node:<id>:power:<n>. */
export const POWER_RUN_STATE = 'power';

/**
 * How long after it was asked for a power run that Temporal does not know yet counts as
 * starting: the API records the run, then starts it (one call to Temporal, well within this).
 * Past it, a run never found never started (the API stopped in between) and holds nothing.
 */
export const POWER_START_GRACE_MS = 30_000;

export interface PowerRequest {
  tenantId: string;
  nodeId: string;
  version?: number;
  action: 'on' | 'off' | 'cycle';
}

/** What a node's power lock is: the run metal.power last started, and when it was asked for. */
export type PowerClaim = Pick<Node, 'id' | 'powerWorkflowId' | 'powerRequestedAt'>;

/** The node's power run when it runs, or may still be starting; else null. */
async function powerRunInProgress(temporal: Client, node: PowerClaim, now: Date): Promise<string | null> {
  if (!node.powerWorkflowId) return null;
  const run = await describeRun(temporal, node.powerWorkflowId);
  if (run) return run.status.name === 'RUNNING' ? node.powerWorkflowId : null;
  const askedAt = node.powerRequestedAt?.getTime() ?? 0;
  return now.getTime() - askedAt < POWER_START_GRACE_MS ? node.powerWorkflowId : null;
}

const powerRunBusy = (nodeId: string, workflowId: string, what: string) =>
  new IronflowError(
    'CONFLICT',
    `node ${nodeId} is still carrying out a power action (workflow ${workflowId}); ${what} once it has ended (temporal workflow describe -w ${workflowId})`,
    { workflowId },
  );

/** CONFLICT while the node's power run runs or is starting: `what` is the refused request (power, deploy, …). */
export async function refuseWhilePowerRuns(temporal: Client, node: PowerClaim, what: string, now = new Date()): Promise<void> {
  const busy = await powerRunInProgress(temporal, node, now);
  if (busy) throw powerRunBusy(node.id, busy, `${what} again`);
}

/** Inside the request's transaction: CONFLICT when a power run was asked for since the node was read (`seen`, its power run then). */
export function refuseNewPowerRun(node: PowerClaim, seen: string | null, what: string): void {
  if (node.powerWorkflowId && node.powerWorkflowId !== seen) throw powerRunBusy(node.id, node.powerWorkflowId, `${what} again`);
}

function checkPowerRequest(node: Node, input: PowerRequest): void {
  checkVersion(node, input.version);
  checkPowerAllowed(node.provisionState);
  if (!node.bmcCredentialsRef) throw new IronflowError('INVALID_STATE', `node ${node.id} has no BMC credentials`, { state: node.provisionState });
}

/**
 * Records a power request and the run that will carry it out, when no other power run of the
 * node is in progress (CONFLICT otherwise). The claim is guarded: the request reads the node's
 * power run, asks Temporal about it, and records its own only if the node still names that
 * run, so of two requests at once one is refused.
 */
export async function recordPowerRequest(deps: { db: Db; temporal: Client }, input: PowerRequest): Promise<{ node: Node; workflowId: string }> {
  const seen = await findMetalNode(deps.db, input.tenantId, input.nodeId);
  checkPowerRequest(seen, input);
  const now = new Date();
  await refuseWhilePowerRuns(deps.temporal, seen, 'ask', now);
  return deps.db.$transaction(async (tx) => {
    const node = await findMetalNode(tx, input.tenantId, input.nodeId);
    checkPowerRequest(node, input);
    refuseNewPowerRun(node, seen.powerWorkflowId, 'ask');
    const workflowId = stateWorkflowId(node.id, POWER_RUN_STATE, await nextRunNumber(tx, node.id, POWER_RUN_STATE));
    const power = input.action === 'off' ? 'off' : 'on';
    const updated = await updateNodeAtVersion(tx, node, { power, powerWorkflowId: workflowId, powerRequestedAt: now });
    await appendEvent(tx, { tenantId: node.tenantId, type: 'node.power.requested', subjectId: node.id, data: { action: input.action, workflowId } });
    return { node: updated, workflowId };
  });
}
