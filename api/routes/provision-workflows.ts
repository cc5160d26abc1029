// Running a profile on a machine, and reading a provision workflow's status: the
// workflow's own `status` query, plus what Temporal knows of the running activity
// (attempt, last heartbeat, last failure).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../core/errors';
import type { ProvisionStatus } from '../../core/plan';
import { profileIdSchema, profileRunSchema, workflowStatusQuerySchema } from '../../core/schemas/profiles';
import { startProvision } from '../../profiles/launch';
import { describeRun, isProvisionRun, lastHeartbeat, queryProvisionStatus } from '../../services/temporal/readers';
import { tenantIdOf } from '../../services/temporal/search-attributes';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export interface PendingActivityView {
  activity: string;
  taskQueue?: string;
  attempt: number;
  state: string;
  heartbeat: unknown;
  lastFailure: string | null;
}

export interface WorkflowStatusView {
  workflowId: string;
  runStatus: string;
  profile: unknown;
  status: ProvisionStatus | null;
  pendingActivities: PendingActivityView[];
}

export const provisionWorkflowRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/v1/profiles/:id/runs',
    { schema: { tags: ['profiles'], params: z.object({ id: profileIdSchema }), body: profileRunSchema } },
    async (request, reply) => {
      authorize(request, 'compute:nodes:provision', request.body.tenantId);
      const started = await startProvision(ctx, { ...request.body, profileId: request.params.id });
      return reply.status(202).send({ workflowId: started.workflowId, runId: started.runId, profileRef: started.profileRef });
    },
  );

  app.get(
    '/v1/workflows/:workflowId',
    { schema: { tags: ['profiles'], params: z.object({ workflowId: z.string().min(1).max(256) }), querystring: workflowStatusQuerySchema } },
    async (request): Promise<WorkflowStatusView> => {
      authorize(request, 'compute:nodes:read', request.query.tenantId);
      const description = await describeRun(ctx.temporal, request.params.workflowId);
      // Another tenant's workflow, or one that is no provision run, reads as none.
      if (!description || tenantIdOf(description) !== request.query.tenantId || !isProvisionRun(description))
        throw notFound('workflow', request.params.workflowId);
      const status = await queryProvisionStatus(ctx.temporal, request.params.workflowId); // null: no worker to answer right now
      const pendingActivities = await Promise.all(
        (description.raw.pendingActivities ?? []).map(async (a) => ({
          activity: a.activityType?.name ?? '',
          attempt: a.attempt ?? 0,
          state: String(a.state ?? ''),
          heartbeat: await lastHeartbeat(ctx.temporal, a),
          lastFailure: a.lastFailure?.message ?? null,
        })),
      );
      return { workflowId: description.workflowId, runStatus: description.status.name, profile: description.memo?.profile ?? null, status, pendingActivities };
    },
  );
};
