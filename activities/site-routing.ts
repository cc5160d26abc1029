// siteAgentFor: which site agent runs a machine's site steps. A connected agent of the
// machine's own site (never another site's): the boot-lease holder first, otherwise the
// first connected agent by id. Connected = a session heartbeat within AGENT_SESSION_FRESH_MS.
import { AGENT_SESSION_FRESH_MS, siteAgentQueue } from '../core/agent-queues';
import type { DbOrTx } from '../services/db';
import type { SiteAgentChoice } from '../core/plan';
import type { ActivityDeps } from './deps';

export interface SiteAgentQuery {
  siteId: string;
  /** Agents a step just gave up on (a task nobody picked up): chosen only if none other is left. */
  avoid?: string[];
}

export async function pickSiteAgent(db: DbOrTx, query: SiteAgentQuery, now: Date = new Date()): Promise<SiteAgentChoice | null> {
  const sessions = await db.agentSession.findMany({
    where: { siteId: query.siteId, role: 'site', lastSeenAt: { gt: new Date(now.getTime() - AGENT_SESSION_FRESH_MS) } },
    orderBy: { nodeId: 'asc' },
  });
  if (sessions.length === 0) return null;
  const lease = await db.bootLease.findUnique({ where: { siteId: query.siteId } });
  const avoid = new Set(query.avoid ?? []);
  const ranked = [...sessions.filter((s) => !avoid.has(s.nodeId)), ...sessions.filter((s) => avoid.has(s.nodeId))];
  const holder = lease?.holderNodeId ? ranked.find((s) => s.nodeId === lease.holderNodeId && !avoid.has(s.nodeId)) : undefined;
  const chosen = holder ?? ranked[0];
  if (!chosen) return null;
  return { agentNodeId: chosen.nodeId, taskQueue: siteAgentQueue(query.siteId, chosen.nodeId), reason: holder ? 'lease-holder' : 'first-connected' };
}

export function createSiteRoutingActivities(deps: ActivityDeps) {
  return {
    /** The machine's site comes from its node row, so a plan cannot route to another site. */
    async siteAgentFor(input: { nodeId: string; avoid?: string[] }): Promise<SiteAgentChoice | null> {
      const node = await deps.db.node.findUnique({ where: { id: input.nodeId }, select: { siteId: true } });
      if (!node) return null;
      return pickSiteAgent(deps.db, { siteId: node.siteId, avoid: input.avoid });
    },
  };
}
export type SiteRoutingActivities = ReturnType<typeof createSiteRoutingActivities>;
