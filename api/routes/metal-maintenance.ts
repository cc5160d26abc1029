// metal.maintenance: the maintenance axis on or off with a reason, decided as
// compute:nodes:provision on the node; the answer is the node's metal view.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { setMaintenance } from '../../services/metal/maintenance';
import { metalView } from '../../core/metal/view';
import { metalMaintenanceSchema, metalNodeParamsSchema, metalNodeSchema } from '../../core/schemas/metal';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const metalMaintenanceRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/v1/metal/nodes/:nodeId/maintenance',
    { schema: { tags: ['metal'], params: metalNodeParamsSchema, body: metalMaintenanceSchema, response: { 200: metalNodeSchema } } },
    async (request) => {
      const b = request.body;
      const principal = authorize(request, 'compute:nodes:provision', b.tenantId);
      const node = await setMaintenance(ctx.db, {
        tenantId: b.tenantId,
        nodeId: request.params.nodeId,
        on: b.on,
        reason: b.reason,
        actor: `credential:${principal.credentialId}`,
        version: b.version,
      });
      return metalView(node);
    },
  );
};
