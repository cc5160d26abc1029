// The wiring check: POST starts a workflow on the control-plane worker that writes a row;
// GET reads it back. `ironflow status --check` uses it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../core/errors';
import { newId } from '../../services/ids';
import { systemCheckCreateSchema, systemCheckSchema, type SystemCheckView } from '../../core/schemas/system';
import { idOf, tenantIdSchema } from '../../core/schemas/common';
import { startSystemCheck } from '../../services/temporal/starters';
import { systemCheckWorkflowId } from '../../services/temporal/workflow-ids';
import { requireTenant } from '../../services/tenants';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

function view(row: {
  id: string;
  tenantId: string;
  workflowId: string;
  status: string;
  workerId: string | null;
  createdAt: Date;
  completedAt: Date | null;
}): SystemCheckView {
  return {
    ...row,
    status: row.status === 'succeeded' ? 'succeeded' : 'running',
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}

export const systemCheckRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/v1/system/checks',
    { schema: { tags: ['system'], body: systemCheckCreateSchema, response: { 202: systemCheckSchema } } },
    async (request, reply) => {
      authorize(request, 'compute:events:read', request.body.tenantId);
      await requireTenant(ctx.db, request.body.tenantId);
      const id = newId('check');
      const row = await ctx.db.systemCheck.create({ data: { id, tenantId: request.body.tenantId, workflowId: systemCheckWorkflowId(id), status: 'running' } });
      await startSystemCheck(ctx.temporal, ctx.config.controlQueue, { checkId: id, tenantId: request.body.tenantId });
      return reply.status(202).send(view(row));
    },
  );

  app.get(
    '/v1/system/checks/:checkId',
    {
      schema: {
        tags: ['system'],
        params: z.object({ checkId: idOf('check') }),
        querystring: z.object({ tenantId: tenantIdSchema }),
        response: { 200: systemCheckSchema },
      },
    },
    async (request) => {
      authorize(request, 'compute:events:read', request.query.tenantId);
      const row = await ctx.db.systemCheck.findFirst({ where: { id: request.params.checkId, tenantId: request.query.tenantId } });
      if (!row) throw notFound('system check', request.params.checkId);
      return view(row);
    },
  );
};
