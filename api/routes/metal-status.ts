// GET /v1/metal/nodes/:nodeId/status: "what step is it on and why did it fail" in one call —
// the node row (state, power, maintenance, last error), Temporal's description of the state's
// workflow (run status, the running activity's attempt and last failure), the workflow's own
// `status` query (step, waiting for, progress) and who holds the machine's logs.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { pickSiteAgent, type SiteRoutingActivities } from '../../activities/site-routing';
import { isConnected } from '../../core/agent-queues';
import type { Db } from '../../services/db';
import { findMetalNode } from '../../services/metal/transition';
import { describeRun, lastHeartbeat, queryProvisionStatus } from '../../services/temporal/readers';
import { metalView } from '../../core/metal/view';
import { tenantQuerySchema } from '../../core/schemas/common';
import { metalNodeParamsSchema } from '../../core/schemas/metal';
import { metalStatusSchema, type MetalStatusView } from '../../core/schemas/metal-status';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

/** A query waits for a worker to answer; an operator's status call does not wait longer than this. */
const QUERY_DEADLINE_MS = 5_000;
/** A site has a handful of agents; the answer names at most this many. */
const MAX_SITE_AGENTS = 16;
/** The workflow's routing activity is not a step: the step's activity is the other pending one. */
const ROUTING_ACTIVITY: keyof SiteRoutingActivities = 'siteAgentFor';

type Session = { nodeId: string; role: string; taskQueue: string; lastSeenAt: Date };
const agentView = (s: Session) => ({
  agentNodeId: s.nodeId,
  taskQueue: s.taskQueue,
  connected: isConnected(s.lastSeenAt, Date.now(), s.role),
  lastSeenAt: s.lastSeenAt.toISOString(),
});

async function workflowFacts(ctx: ApiContext, workflowId: string | null) {
  if (!workflowId) return { workflow: null, status: null, pending: undefined, heartbeat: null };
  const description = await describeRun(ctx.temporal, workflowId); // null: retention dropped it
  if (!description) return { workflow: null, status: null, pending: undefined, heartbeat: null };
  const status = description.status.name === 'RUNNING' ? await queryProvisionStatus(ctx.temporal, workflowId, { deadlineMs: QUERY_DEADLINE_MS }) : null;
  const pending = (description.raw.pendingActivities ?? []).find((a) => a.activityType?.name !== ROUTING_ACTIVITY);
  const { namespace } = ctx.config.temporal;
  return {
    workflow: {
      workflowId: description.workflowId,
      runId: description.runId,
      runStatus: description.status.name,
      phase: status?.phase ?? null,
      webUiPath: `/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(description.workflowId)}/${description.runId}`,
    },
    status,
    pending,
    // The step's progress as its agent reports it (bytes written, disks wiped …): its last heartbeat.
    heartbeat: pending ? await lastHeartbeat(ctx.temporal, pending) : null,
  };
}

/**
 * The control plane stores no console or ramdisk log (the ramdisk prints to the machine's
 * console; agents log where they run), so this names who has them: the machine's own
 * agent, the site's agents (the boot server's view), the BMC, and the event log's filter.
 */
async function logLocations(db: Db, node: { id: string; tenantId: string; siteId: string; bmcDriver: string | null; bmcAddress: string | null }) {
  const [own, siteSessions, chosen] = await Promise.all([
    db.agentSession.findUnique({ where: { nodeId: node.id } }),
    db.agentSession.findMany({ where: { siteId: node.siteId, role: 'site' }, orderBy: { lastSeenAt: 'desc' }, take: MAX_SITE_AGENTS }),
    pickSiteAgent(db, { site: { siteId: node.siteId } }),
  ]);
  // The agent the node's site steps go to first, then the rest.
  const siteAgents = siteSessions.map(agentView).sort((a, b) => Number(b.agentNodeId === chosen?.agentNodeId) - Number(a.agentNodeId === chosen?.agentNodeId));
  return {
    machineAgent: own && own.role !== 'site' ? { ...agentView(own), role: own.role } : null,
    siteAgents,
    bmc: { driver: node.bmcDriver, address: node.bmcAddress },
    events: { subjectId: node.id, command: `ironflow events --tenant ${node.tenantId} --type node.` },
  };
}

export const metalStatusRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.get(
    '/v1/metal/nodes/:nodeId/status',
    { schema: { tags: ['metal'], params: metalNodeParamsSchema, querystring: tenantQuerySchema, response: { 200: metalStatusSchema } } },
    async (request): Promise<MetalStatusView> => {
      authorize(request, 'compute:nodes:read', request.query.tenantId);
      // Another tenant's node is NOT_FOUND, as on every metal route.
      const node = await findMetalNode(ctx.db, request.query.tenantId, request.params.nodeId);
      const view = metalView(node);
      const [{ workflow, status, pending, heartbeat }, logs] = await Promise.all([workflowFacts(ctx, node.workflowId), logLocations(ctx.db, node)]);
      const step = status?.step ?? null;
      return {
        nodeId: node.id,
        siteId: node.siteId,
        state: node.provisionState,
        provisionPhase: node.provisionPhase,
        power: node.power,
        maintenance: node.maintenance,
        maintenanceReason: node.maintenance ? node.maintenanceReason : null,
        workflow,
        step: step && {
          key: step.key,
          use: step.use,
          attempt: step.attempt,
          activityAttempt: pending?.attempt ?? null,
          taskQueue: step.taskQueue ?? null,
          startedAt: step.startedAt,
          lastFailure: pending?.lastFailure?.message ?? null,
          progress: status?.progress ?? heartbeat ?? null,
        },
        waitingFor: status?.waitingFor ?? null,
        error: view.lastError,
        failedFrom: node.failedFrom,
        logs,
      };
    },
  );
};
