// The site-boot controller's activity: one tick of the boot lease, and the reclaim of boot
// slots whose run ended without giving them back.
import { tickSiteBoot, type TickResult } from '../services/boot-lease/tick';
import { reclaimBootSlots } from '../services/boot-slots/reclaim';
import { bootSlotsReclaimed } from '../services/metrics/registry';
import { describeRun } from '../services/temporal/readers';
import type { ActivityDeps } from './deps';
import { wakeGranted } from './boot-slots';

export function createSiteBootActivities(deps: ActivityDeps) {
  const isRunning = async (workflowId: string): Promise<boolean> => (await describeRun(deps.temporal, workflowId))?.status.name === 'RUNNING';
  return {
    async tickSiteBootLease(siteId: string): Promise<TickResult> {
      const result = await tickSiteBoot(deps.db, siteId);
      if (!result.siteGone) {
        const { reclaimed, granted } = await reclaimBootSlots(deps.db, siteId, deps.config.provisioning.bootSlotsPerSite, isRunning);
        if (reclaimed.length > 0) bootSlotsReclaimed.inc(reclaimed.length);
        await wakeGranted(deps, granted);
      }
      return result;
    },
  };
}
export type SiteBootActivities = ReturnType<typeof createSiteBootActivities>;
