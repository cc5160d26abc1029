// POST /v1/agents/session: an agent's heartbeat. Authenticated by its certificate and a
// signature over the request; answers with its site spec and boot lease state. A lease holder's
// heartbeat renews its live lease (services/boot-lease/renew.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { isConnected, sessionIntervalMsFor } from '../../core/agent-queues';
import { leaseViewFor } from '../../core/boot-lease/decide';
import { renewHeldBootLease } from '../../services/boot-lease/renew';
import { siteCacheImages, type CacheImage } from '../../services/images/prewarm';
import { pinnedSiteImages, recordSiteCacheReport } from '../../core/images/site-cache-report';
import { appendEvent } from '../../services/events';
import { recordHeartbeat } from '../../services/agent-sessions/record-heartbeat';
import { agentHeartbeats } from '../../services/metrics/registry';
import { signalNodeAgentBack, temporalAgentJoinedNotifier } from '../../services/joins/agent-joined';
import { agentTaskQueue } from '../../core/joins/certificate-policy';
import { recordDiscoveryReport } from '../../services/metal/discovery-store';
import { nodeSessionView } from '../../services/metal/node-reads';
import { heartbeatSchema, sessionAnswerSchema } from '../../core/schemas/agent-sessions';
import type { ApiContext } from '../context';
import { ensureSiteBootController } from '../../services/temporal/starters';

export const agentSessionRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const notifyJoined = temporalAgentJoinedNotifier(ctx.temporal, app.log);
  /** The site's pre-warm images plus every image a deploy there pins (deduplicated by digest), and the pinned digests. */
  async function siteImages(siteId: string, now: Date): Promise<{ cacheImages: CacheImage[]; pinnedImages: string[] }> {
    const cacheImages = await siteCacheImages(ctx.db, siteId);
    const pinned = await pinnedSiteImages(ctx.db, siteId, now);
    const named = new Set(cacheImages.map((image) => image.sha256));
    for (const image of pinned) if (!named.has(image.sha256)) cacheImages.push(image);
    return { cacheImages, pinnedImages: [...new Set(pinned.map((image) => image.sha256))] };
  }

  app.post(
    '/session',
    { config: { agentPurpose: 'session' }, schema: { tags: ['agents'], security: [], body: heartbeatSchema, response: { 200: sessionAnswerSchema } } },
    async (request) => {
      const { agent } = request;
      const now = new Date();
      const taskQueue = agentTaskQueue(agent);
      const previous = await recordHeartbeat(
        ctx.db,
        {
          nodeId: agent.nodeId,
          siteId: agent.siteId ?? '',
          role: agent.role,
          taskQueue,
          ...(request.body.siteStatus ? { siteStatus: request.body.siteStatus } : {}),
          ...(request.body.opened ? { opened: true } : {}),
        },
        now,
      );
      agentHeartbeats.inc({ role: agent.role });
      if (agent.role === 'node' && request.body.opened) {
        // A node agent back (after a reboot): the same agentJoined a join delivers, to the node's running workflows.
        const workflowIds = await signalNodeAgentBack(ctx.temporal, agent.nodeId, notifyJoined).catch(() => []);
        await appendEvent(ctx.db, {
          tenantId: agent.tenantId,
          type: 'node.agent.reconnected',
          subjectId: agent.nodeId,
          data: { role: agent.role, ...(request.body.bootId ? { bootId: request.body.bootId } : {}), workflowIds },
        });
      }
      const isSiteAgent = agent.role === 'site' && agent.siteId !== null;
      if (isSiteAgent && (!previous || !isConnected(previous.lastSeenAt, now.getTime(), 'site'))) {
        await ensureSiteBootController(ctx.temporal, ctx.config.controlQueue, agent.siteId as string);
      }
      if (isSiteAgent && request.body.images) {
        const changed = await recordSiteCacheReport(ctx.db, { nodeId: agent.nodeId, siteId: agent.siteId as string, images: request.body.images });
        // A failed pull changes the report (a failed row): recorded once then, not on every beat.
        if (changed && request.body.siteStatus?.state === 'FAILED') {
          await appendEvent(ctx.db, {
            tenantId: agent.tenantId,
            type: 'site.cache.failed',
            subjectId: agent.nodeId,
            data: { siteId: agent.siteId, message: request.body.siteStatus.message },
          });
        }
      }
      // Discovery lists only from site agents (a boot server's view); another role's is ignored.
      if (isSiteAgent && request.body.discovered) {
        await recordDiscoveryReport(ctx.db, { agentNodeId: agent.nodeId, siteId: agent.siteId as string, entries: request.body.discovered }, now);
      }
      if (isSiteAgent) await renewHeldBootLease(ctx.db, agent.siteId as string, agent.nodeId, now);
      const lease = isSiteAgent ? await ctx.db.bootLease.findUnique({ where: { siteId: agent.siteId as string } }) : null;
      const lifetime = agent.notAfter.getTime();
      const node = agent.role === 'node' ? await nodeSessionView(ctx.db, agent.nodeId) : null;
      return {
        nodeId: agent.nodeId,
        role: agent.role,
        siteId: agent.siteId,
        taskQueue,
        heartbeatIntervalMs: sessionIntervalMsFor(agent.role, node?.provisionState),
        certificate: {
          serial: agent.serial,
          notAfter: agent.notAfter.toISOString(),
          // Renew with a third of the lifetime left (24 h site certificates: 8 h ahead).
          renewAfter: new Date(lifetime - (lifetime - now.getTime()) / 3).toISOString(),
        },
        site: isSiteAgent ? { bootLease: leaseViewFor(agent.nodeId, lease, now), ...(await siteImages(agent.siteId as string, now)) } : null,
        host: node ? { spec: node.hostSpec } : null,
      };
    },
  );
};
