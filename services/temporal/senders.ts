// Every signal the control plane sends a running workflow, by its definition (never by
// name). Each is best effort toward a workflow that may have ended: one that is gone
// answers false, never an error (the database says what it needs to know).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { bulkCancelSignal } from '../../workflows/metal-bulk';
import { abortSignal, agentJoinedSignal, bootSlotGrantedSignal, macConfirmedSignal, type AgentJoined } from '../../workflows/provision-handles';
import { quorumBatchSignal } from '../../workflows/quorum-gate';

/** Runs the send; false when the workflow is not running (never started, or closed). */
async function toRunning(send: () => Promise<void>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** A provision run's longest abort reason (the workflow keeps it in its status and history). */
const MAX_ABORT_REASON = 512;

/** Asks a provision (state) workflow to stop: the running step is cancelled, cleanup runs. */
export const abortProvisionRun = (client: Client, workflowId: string, reason: string): Promise<boolean> =>
  toRunning(() => client.workflow.getHandle(workflowId).signal(abortSignal, reason.slice(0, MAX_ABORT_REASON)));

/** Tells a provision run that the machine's agent joined (ends an `await: 'rejoin'` wait). */
export const notifyAgentJoined = (client: Client, workflowId: string, joined: AgentJoined): Promise<boolean> =>
  toRunning(() => client.workflow.getHandle(workflowId).signal(agentJoinedSignal, joined));

/** Tells a provision run that metal.confirmMac stored this MAC (a step awaiting `confirmMac` goes on). */
export const notifyMacConfirmed = (client: Client, workflowId: string, mac: string): Promise<boolean> =>
  toRunning(() => client.workflow.getHandle(workflowId).signal(macConfirmedSignal, mac));

/** Tells a provision run queued for a boot slot that its site granted it one (it reads the grant back). */
export const notifyBootSlotGranted = (client: Client, workflowId: string): Promise<boolean> =>
  toRunning(() => client.workflow.getHandle(workflowId).signal(bootSlotGrantedSignal));

/** Tells the workflow a quorum batch serves to look at the batch now (it also looks again on its own). */
export const notifyQuorumBatch = (client: Client, workflowId: string): Promise<boolean> =>
  toRunning(() => client.workflow.getHandle(workflowId).signal(quorumBatchSignal));

/** Asks a metal bulk run's workflow to stop handing out nodes. */
export const cancelMetalBulk = (client: Client, workflowId: string): Promise<boolean> =>
  toRunning(() => client.workflow.getHandle(workflowId).signal(bulkCancelSignal));
