// metal.ensureRamdisk's place in its site's boot queue (services/boot-slots/): take a slot or
// queue for one, give it back when the run ends. The limit is read here, from the worker's
// settings, so a changed limit holds from the next grant and never enters a history.
import { log } from '@temporalio/activity';
import { enterBootQueue, leaveBootQueue } from '../services/boot-slots/queue';
import { notifyBootSlotGranted } from '../services/temporal/senders';
import type { ActivityDeps } from './deps';

export interface BootSlotAnswer {
  granted: boolean;
  /** Runs queued before this one at the site. */
  ahead: number;
  /** The site's slots: how many of its machines boot at a time. */
  limit: number;
}

export function createBootSlotActivities(deps: ActivityDeps) {
  const limit = () => deps.config.provisioning.bootSlotsPerSite;
  return {
    async 'metal.bootSlot.take'(input: { workflowId: string; siteId: string; nodeId: string }): Promise<BootSlotAnswer> {
      const place = await enterBootQueue(deps.db, input, limit());
      await wakeGranted(deps, place.wake);
      return { granted: place.granted, ahead: place.ahead, limit: limit() };
    },

    async 'metal.bootSlot.give'(input: { workflowId: string; siteId: string }): Promise<void> {
      await wakeGranted(deps, await leaveBootQueue(deps.db, input, limit()));
    },
  };
}
export type BootSlotActivities = ReturnType<typeof createBootSlotActivities>;

/**
 * Wakes runs granted a slot. A wake-up that fails (Temporal is busy) only delays the run until
 * its recheck, so it is said in the worker's log: a run that waits with its slot granted has a cause.
 */
export async function wakeGranted(deps: Pick<ActivityDeps, 'temporal'>, workflowIds: string[]): Promise<void> {
  await Promise.all(
    workflowIds.map((workflowId) =>
      notifyBootSlotGranted(deps.temporal, workflowId).catch((err: unknown) => {
        log.warn('boot slot granted, but the wake-up signal failed: the run looks again at its recheck', {
          workflowId,
          error: err instanceof Error ? err.message : String(err),
        });
      }),
    ),
  );
}
