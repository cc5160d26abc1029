// The holder's own heartbeat renews its live boot lease, as the controller's tick does. The
// tick is a timer, a workflow task and an activity away through Temporal; when those run late
// (a loaded Temporal, a busy worker) the lease would lapse under a connected holder, which then
// fences itself and drops the machines booting from it. The heartbeat is one request.
import { BOOT_LEASE_TTL_MS } from '../../core/boot-lease/decide';
import type { Db } from '../db';

/**
 * Extends the site's lease by its TTL from `now` when `nodeId` holds it and it is still live.
 * An expired lease is the controller's alone to renew, promote or release: a renewal here never
 * races a change of holder (the tick's writes are guarded by the expiry they read).
 */
export async function renewHeldBootLease(db: Db, siteId: string, nodeId: string, now: Date): Promise<boolean> {
  const renewed = await db.bootLease.updateMany({
    where: { siteId, holderNodeId: nodeId, expiresAt: { gt: now } },
    data: { expiresAt: new Date(now.getTime() + BOOT_LEASE_TTL_MS) },
  });
  return renewed.count === 1;
}
