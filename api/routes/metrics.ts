// GET /metrics: the control plane's metrics in Prometheus' text format (summed over the API's
// processes), the gauges this scrape reads from the database, then the Temporal
// SDK's worker metrics (workflows and activities by type, outcome and latency, task slots,
// sticky cache), read from the SDK's exporter of the control plane's own worker, so one scrape
// target has both (worker processes of their own serve theirs themselves). Root operators
// only (a credential with compute:events:read in the root tenant): the counts describe the
// whole fleet.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { isConnected } from '../../core/agent-queues';
import { agentSessions, bootSlots, metricsRegistry, scrapedRegistry } from '../../services/metrics/registry';
import { ROOT_TENANT } from '../../core/permissions';
import { scrapeSdkMetrics } from '../../core/sdk-metrics';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const metricsRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.get('/metrics', { schema: { tags: ['system'] } }, async (request, reply) => {
    authorize(request, 'compute:events:read', ROOT_TENANT);
    const sessions = await ctx.db.agentSession.findMany({ select: { role: true, siteId: true, lastSeenAt: true } });
    agentSessions.reset();
    const now = Date.now();
    for (const { role, siteId, lastSeenAt } of sessions) agentSessions.inc({ role, site: siteId, connected: String(isConnected(lastSeenAt, now, role)) });
    const slotsBySite = (slot: { not: null } | null) => ctx.db.bootSlot.groupBy({ by: ['siteId'], where: { slot }, _count: { _all: true } });
    const [held, queued] = await Promise.all([slotsBySite({ not: null }), slotsBySite(null)]);
    bootSlots.reset();
    for (const row of held) bootSlots.set({ site: row.siteId, state: 'held' }, row._count._all);
    for (const row of queued) bootSlots.set({ site: row.siteId, state: 'queued' }, row._count._all);
    const [own, scraped, sdk] = await Promise.all([ctx.processMetrics(), scrapedRegistry.metrics(), scrapeSdkMetrics(ctx.workerSdkMetricsAddress)]);
    return reply.type(metricsRegistry.contentType).send(`${own}\n${scraped}\n${sdk}`);
  });
};
