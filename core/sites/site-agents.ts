// A site's agents (from their sessions) and its boot lease, as sites.get shows them.
import { isConnected } from '../agent-queues';
import type { DbOrTx } from '../../services/db';
import { siteSectionStatusSchema } from '../schemas/agent-sessions';
import type { SiteAgents } from '../schemas/site-agents';

export async function siteAgentsOf(db: DbOrTx, siteId: string, now: Date = new Date()): Promise<SiteAgents> {
  const [sessions, lease] = await Promise.all([
    db.agentSession.findMany({ where: { siteId, role: 'site' }, orderBy: { nodeId: 'asc' } }),
    db.bootLease.findUnique({ where: { siteId } }),
  ]);
  const live = !!lease?.holderNodeId && !!lease.expiresAt && lease.expiresAt.getTime() > now.getTime();
  return {
    agents: sessions.map((s) => ({
      nodeId: s.nodeId,
      connected: isConnected(s.lastSeenAt, now.getTime(), 'site'),
      lastSeenAt: s.lastSeenAt.toISOString(),
      bootServer: live && lease?.holderNodeId === s.nodeId,
      siteStatus: siteSectionStatusSchema
        .nullable()
        .catch(null)
        .parse(s.siteStatus ?? null),
    })),
    bootLease: lease ? { holderNodeId: lease.holderNodeId, epoch: lease.epoch, expiresAt: lease.expiresAt?.toISOString() ?? null, live } : null,
  };
}
