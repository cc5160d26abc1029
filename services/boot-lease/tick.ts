// One tick of a site's boot-lease controller against the database: read the site's
// agent sessions and the lease, decide, write the change and its event in one transaction.
import { isConnected } from '../../core/agent-queues';
import type { Db } from '../db';
import { appendEvent } from '../events';
import { bootLeaseChanges } from '../metrics/registry';
import { decideBootLease, type LeaseChange, type LeaseState } from '../../core/boot-lease/decide';

export interface TickResult {
  siteGone: boolean;
  change: LeaseChange;
  lease: { holderNodeId: string | null; epoch: number; expiresAt: string | null };
}

export async function tickSiteBoot(db: Db, siteId: string, now: Date = new Date()): Promise<TickResult> {
  const result = await db.$transaction(async (tx): Promise<TickResult> => {
    const site = await tx.site.findUnique({ where: { id: siteId } });
    if (!site || site.deletedAt) {
      await tx.bootLease.deleteMany({ where: { siteId } });
      return { siteGone: true, change: 'idle' as const, lease: { holderNodeId: null, epoch: 0, expiresAt: null } };
    }
    const row = await tx.bootLease.findUnique({ where: { siteId } });
    const lease: LeaseState = row ?? { holderNodeId: null, epoch: 0, expiresAt: null };
    const sessions = await tx.agentSession.findMany({ where: { siteId, role: 'site' } });
    const agents = sessions.map((s) => ({ nodeId: s.nodeId, connected: isConnected(s.lastSeenAt, now.getTime(), 'site') }));
    const { next, change } = decideBootLease(lease, agents, now);

    if (change !== 'kept' && change !== 'idle') {
      // Guarded by the epoch and expiry read: a second controller racing this tick cannot move
      // it twice, and a holder's heartbeat that renewed it meanwhile (renew.ts) keeps it.
      if (row) {
        const updated = await tx.bootLease.updateMany({ where: { siteId, epoch: row.epoch, expiresAt: row.expiresAt }, data: next });
        if (updated.count !== 1) {
          if (change === 'renewed') return { siteGone: false, change: 'kept' as const, lease: leaseView(lease) };
          throw new Error(`boot lease of ${siteId} moved under this tick; the next tick retries`);
        }
      } else {
        await tx.bootLease.create({ data: { siteId, ...next } });
      }
      if (change !== 'renewed') {
        await appendEvent(tx, {
          tenantId: site.ownerTenantId,
          type: `site.boot-lease.${change}`,
          subjectId: siteId,
          data: { holderNodeId: next.holderNodeId, previousHolderNodeId: lease.holderNodeId, epoch: next.epoch },
        });
      }
    }
    return { siteGone: false, change, lease: leaseView(next) };
  });
  if (result.change !== 'kept' && result.change !== 'idle') bootLeaseChanges.inc({ change: result.change });
  return result;
}

function leaseView(lease: LeaseState): TickResult['lease'] {
  return { holderNodeId: lease.holderNodeId, epoch: lease.epoch, expiresAt: lease.expiresAt?.toISOString() ?? null };
}
