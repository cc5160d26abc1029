// The site-boot controller's activity: one tick of the boot lease.
import { tickSiteBoot, type TickResult } from '../services/boot-lease/tick';
import type { ActivityDeps } from './deps';

export function createSiteBootActivities(deps: ActivityDeps) {
  return {
    async tickSiteBootLease(siteId: string): Promise<TickResult> {
      return tickSiteBoot(deps.db, siteId);
    },
  };
}
export type SiteBootActivities = ReturnType<typeof createSiteBootActivities>;
