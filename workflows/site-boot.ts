// `site-boot:<siteId>`: the singleton controller of a site's boot lease. It ticks every
// 5 s, ends when the site is deleted, and continues-as-new before its history grows.
import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import { SITE_BOOT_TICK_MS } from '../core/boot-lease/decide';
import type { SiteBootActivities } from '../activities/site-boot';

const { tickSiteBootLease } = proxyActivities<SiteBootActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds' },
});

/** Ticks per run: 720 × 5 s = one hour of history (about 4 events per tick). */
const TICKS_PER_RUN = 720;

export async function siteBoot(siteId: string): Promise<void> {
  for (let i = 0; i < TICKS_PER_RUN; i++) {
    const result = await tickSiteBootLease(siteId);
    if (result.siteGone) return;
    await sleep(SITE_BOOT_TICK_MS);
  }
  await continueAsNew<typeof siteBoot>(siteId);
}
