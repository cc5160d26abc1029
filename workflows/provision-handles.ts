// The provision workflow's handles: what operators (Temporal Web UI, `temporal workflow
// signal`, the API) and the join path send it, and what it answers.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { MAC_CONFIRMED_SIGNAL } from '../core/metal/confirm-mac-signal';
import type { ProvisionStatus } from '../core/plan';

export interface AgentJoined {
  role: 'ramdisk' | 'node';
  agentNodeId?: string;
  /** The queue the agent that joined serves (a ramdisk's is its boot's own): checked before any step goes there. */
  taskQueue?: string;
}

/** Stops the run: the running step is cancelled, cleanup runs, the workflow fails ABORTED. */
export const abortSignal = defineSignal<[string]>('abort');
/** metal.confirmMac by signal: the MAC an operator confirms for a machine found by PXE discovery. */
export const confirmMacSignal = defineSignal<[string]>('confirmMac');
/** The API's word that metal.confirmMac stored this MAC (through the REST route or another workflow's handler). */
export const macConfirmedSignal = defineSignal<[string]>(MAC_CONFIRMED_SIGNAL);
/** The join path: the machine's next agent joined (ends an `await: 'rejoin'` wait). */
export const agentJoinedSignal = defineSignal<[AgentJoined]>('agentJoined');
/** The site's boot queue granted this run a slot: look again (the grant is read back, never taken from the signal). */
export const bootSlotGrantedSignal = defineSignal('bootSlotGranted');

/** The same as the signals, but the caller hears why a request is refused. */
export const abortUpdate = defineUpdate<ProvisionStatus, [string]>('abort');
/** metal.confirmMac by Update: answers the stored MAC, or the refusal (INVALID_STATE, CONFLICT, INVALID_INPUT). */
export const confirmMacUpdate = defineUpdate<string, [string]>('confirmMac');

export const statusQuery = defineQuery<ProvisionStatus>('status');
