// The boot lease `site:<siteId>:boot` (spec 001, "One active boot server per site"): what
// one controller tick does, as a pure function of the lease and the site's agents.
//
// A live lease never changes hands: a holder that lost its session keeps the lease until
// it expires (and fences itself); only then is the first connected standby, by node id,
// promoted under a new epoch. With no agent left the lease is released and the epoch
// still moves on, so an epoch names one holder's tenure, never two.

export const BOOT_LEASE_TTL_MS = 15_000;
export const SITE_BOOT_TICK_MS = 5_000;

export interface LeaseState {
  holderNodeId: string | null;
  epoch: number;
  expiresAt: Date | null;
}

export interface SiteAgent {
  nodeId: string;
  connected: boolean;
}

export type LeaseChange = 'acquired' | 'renewed' | 'kept' | 'promoted' | 'released' | 'idle';

export interface LeaseDecision {
  next: LeaseState;
  change: LeaseChange;
}

export function decideBootLease(lease: LeaseState, agents: readonly SiteAgent[], now: Date): LeaseDecision {
  const holder = lease.holderNodeId ? agents.find((a) => a.nodeId === lease.holderNodeId) : undefined;
  const renewed = () => new Date(now.getTime() + BOOT_LEASE_TTL_MS);

  if (lease.holderNodeId && holder?.connected) {
    return { next: { ...lease, expiresAt: renewed() }, change: 'renewed' };
  }
  const live = lease.holderNodeId !== null && lease.expiresAt !== null && lease.expiresAt.getTime() > now.getTime();
  if (live) return { next: lease, change: 'kept' };

  const standby = agents
    .filter((a) => a.connected)
    .map((a) => a.nodeId)
    .sort()[0];
  if (standby) {
    return {
      next: { holderNodeId: standby, epoch: lease.epoch + 1, expiresAt: renewed() },
      change: lease.holderNodeId ? 'promoted' : 'acquired',
    };
  }
  if (lease.holderNodeId) {
    return { next: { holderNodeId: null, epoch: lease.epoch + 1, expiresAt: null }, change: 'released' };
  }
  return { next: lease, change: 'idle' };
}

/** What an agent is told in its session answer. */
export interface BootLeaseView {
  active: boolean;
  epoch: number;
  holderNodeId: string | null;
  expiresAt: string | null;
}

export function leaseViewFor(nodeId: string, lease: LeaseState | null, now: Date): BootLeaseView {
  const live = !!lease?.expiresAt && lease.expiresAt.getTime() > now.getTime();
  return {
    active: !!lease && live && lease.holderNodeId === nodeId,
    epoch: lease?.epoch ?? 0,
    holderNodeId: lease?.holderNodeId ?? null,
    expiresAt: lease?.expiresAt?.toISOString() ?? null,
  };
}
