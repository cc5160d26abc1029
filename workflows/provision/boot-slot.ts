// The run's boot slot at its site (services/boot-slots/): metal.ensureRamdisk takes one before
// it PXE-boots the machine, queuing while the site's slots are all held, and the run gives it
// back when it ends, cleanup done (index.ts). A queued run waits for its wake-up signal, and
// looks again now and then without one. Versioned with a patch (../patches.ts): a run started before boot
// slots existed replays as it ran, with none.
import { condition, setHandler } from '@temporalio/workflow';
import { takesPatch } from '../patches';
import type { BootSlotActivities } from '../../activities/boot-slots';
import { bootSlotGrantedSignal } from '../provision-handles';
import type { RunStatus } from './status';
import { controlLeaves } from './control-leaves';

const slots = controlLeaves<BootSlotActivities>();

/**
 * A queued run looks again this often with no wake-up (a signal lost while Temporal was
 * unreachable). Rarely: a thousand queued runs looking every minute cost the control plane
 * more than the runs booting.
 */
const BOOT_SLOT_RECHECK_MS = 5 * 60_000;

export interface BootSlot {
  /** Holds one of the site's slots, queuing until one is free; answers how long it queued (ms), 0 when the run holds one already. */
  take(siteId: string): Promise<number>;
  /** Whether the run queued or holds a slot: give() has something to give back. */
  taken(): boolean;
  /** Gives the slot (or the place in the queue) back. */
  give(): Promise<void>;
}

/** The run's boot slot; call once, before the first step (it installs the wake-up's handler). */
export function startBootSlot(workflowId: string, nodeId: string, run: RunStatus): BootSlot {
  let wakeUps = 0;
  setHandler(bootSlotGrantedSignal, () => void (wakeUps += 1));
  let site: string | null = null;
  let held = false;

  return {
    async take(siteId) {
      if (held || !takesPatch('boot-slots')) return 0;
      site = siteId;
      const queuedAt = Date.now();
      let since: string | undefined;
      for (;;) {
        const seen = wakeUps;
        const answer = await slots()['metal.bootSlot.take']({ workflowId, siteId, nodeId });
        if (answer.granted) break;
        run.waitFor(`a boot slot at site ${siteId} (${answer.limit} of its machines boot at a time; ${answer.ahead} runs queued ahead of this one)`, since);
        since = run.waitingSince() ?? undefined;
        await condition(() => wakeUps !== seen, BOOT_SLOT_RECHECK_MS);
      }
      held = true;
      if (since) run.waitFor(null);
      return Date.now() - queuedAt;
    },
    taken: () => site !== null,
    async give() {
      if (site === null) return;
      const siteId = site;
      site = null;
      held = false;
      await slots()['metal.bootSlot.give']({ workflowId, siteId });
    },
  };
}
