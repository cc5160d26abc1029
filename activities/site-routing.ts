// siteAgentFor: which site agent runs a machine's site steps. A connected agent of the
// machine's own site (never another site's): the boot-lease holder first, otherwise the
// first connected agent by id. Connected = a session heartbeat within AGENT_SESSION_FRESH_MS.
// Every BMC command of every run asks (20 a machine over a fleet's enroll, deploy and
// release), so the sessions and the lease are one raw statement, not three model queries
// (services/raw-statements.ts).
import { AGENT_SESSION_FRESH_MS, siteAgentQueue } from '../core/agent-queues';
import { Prisma, type DbOrTx } from '../services/db';
import { queryRows } from '../services/raw-statements';
import type { SiteAgentChoice } from '../core/plan';
import type { ActivityDeps } from './deps';

export interface SiteAgentQuery {
  /** The site, or the machine whose site it is. */
  site: { siteId: string } | { nodeId: string };
  /** Agents a step just gave up on (a task nobody picked up): chosen only if none other is left. */
  avoid?: string[];
}

interface ConnectedSiteAgent {
  nodeId: string;
  siteId: string;
  /** The site's boot-lease holder (the same on every row), null when none. */
  holderNodeId: string | null;
}

export async function pickSiteAgent(db: DbOrTx, query: SiteAgentQuery, now: Date = new Date()): Promise<SiteAgentChoice | null> {
  const site = 'siteId' in query.site ? Prisma.sql`${query.site.siteId}` : Prisma.sql`(SELECT "siteId" FROM "Node" WHERE "id" = ${query.site.nodeId})`;
  const sessions = await queryRows<ConnectedSiteAgent>(
    db,
    Prisma.sql`SELECT s."nodeId", s."siteId", l."holderNodeId" FROM "AgentSession" s LEFT JOIN "BootLease" l ON l."siteId" = s."siteId"
      WHERE s."siteId" = ${site} AND s."role" = 'site' AND s."lastSeenAt" > ${new Date(now.getTime() - AGENT_SESSION_FRESH_MS)} ORDER BY s."nodeId"`,
  );
  const avoid = new Set(query.avoid ?? []);
  const ranked = [...sessions.filter((s) => !avoid.has(s.nodeId)), ...sessions.filter((s) => avoid.has(s.nodeId))];
  const holder = ranked.find((s) => s.nodeId === s.holderNodeId && !avoid.has(s.nodeId));
  const chosen = holder ?? ranked[0];
  if (!chosen) return null;
  return { agentNodeId: chosen.nodeId, taskQueue: siteAgentQueue(chosen.siteId, chosen.nodeId), reason: holder ? 'lease-holder' : 'first-connected' };
}

export function createSiteRoutingActivities(deps: ActivityDeps) {
  return {
    /** The machine's site comes from its node row, so a plan cannot route to another site. */
    async siteAgentFor(input: { nodeId: string; avoid?: string[] }): Promise<SiteAgentChoice | null> {
      return pickSiteAgent(deps.db, { site: { nodeId: input.nodeId }, avoid: input.avoid });
    },
  };
}
export type SiteRoutingActivities = ReturnType<typeof createSiteRoutingActivities>;
