// Where a step on the ramdisk goes. Each boot's ramdisk serves a queue of its own
// (core/agent-queues.ts), which the run learns from the ramdisk's join (agentJoined names it)
// or from a probe that it answered; a run that did neither (the ramdisk an earlier run
// booted, a rescue's say) reads it from the machine's ramdisk session. Versioned with
// a patch (../patches.ts): a run begun when a node's ramdisks shared one queue replays as it ran.
import { ApplicationFailure } from '@temporalio/workflow';
import { takesPatch } from '../patches';
import type { RamdiskBootActivities } from '../../activities/ramdisk-boot';
import type { RunContext } from './run-context';
import { controlLeaves } from './control-leaves';

const leaves = controlLeaves<RamdiskBootActivities>();

/** The one queue every ramdisk of a node served before queues per boot: what runs recorded then used. */
export const sharedRamdiskQueue = (nodeId: string): string => `ramdisk.${nodeId}`;

/** The queue of the machine's ramdisk: the one this run knows, else its running ramdisk's (INVALID_STATE when none runs). */
export async function ramdiskTaskQueue(ctx: RunContext): Promise<string> {
  const known = ctx.run.ramdiskQueue();
  if (known) return known;
  const { nodeId } = ctx.target;
  if (!takesPatch('ramdisk-queue-per-boot')) return sharedRamdiskQueue(nodeId);
  const running = await leaves()['metal.ramdiskQueue']({ nodeId });
  if (!running) {
    throw ApplicationFailure.create({
      message: `no ramdisk of node ${nodeId} is running to take a step on the ramdisk: boot it first (a metal.ensureRamdisk step before this one)`,
      type: 'INVALID_STATE',
      nonRetryable: true,
      details: [{ nodeId, reason: 'no-ramdisk' }],
    });
  }
  ctx.run.useRamdiskQueue(running);
  return running;
}
