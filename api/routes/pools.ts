// pools.*: create, get, list, update, delete. Decided as compute:sites:manage / read.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { createPool } from '../../services/pools/create-pool';
import { deletePool } from '../../services/pools/delete-pool';
import { findOwnedPool } from '../../core/pools/pool-lookup';
import { poolView } from '../../core/pools/pool-view';
import { updatePool } from '../../services/pools/update-pool';
import { tenantQuerySchema } from '../../core/schemas/common';
import { poolCreateSchema, poolListQuerySchema, poolListSchema, poolParamsSchema, poolSchema, poolUpdateSchema } from '../../core/schemas/pools';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const poolRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post('/v1/pools', { schema: { tags: ['pools'], body: poolCreateSchema, response: { 200: poolSchema, 201: poolSchema } } }, async (request, reply) => {
    authorize(request, 'compute:sites:manage', request.body.tenantId);
    const { pool, created } = await createPool(ctx.db, request.body);
    return reply.status(created ? 201 : 200).send(pool);
  });

  app.get('/v1/pools', { schema: { tags: ['pools'], querystring: poolListQuerySchema, response: { 200: poolListSchema } } }, async (request) => {
    authorize(request, 'compute:sites:read', request.query.tenantId);
    const rows = await ctx.db.pool.findMany({
      where: { tenantId: request.query.tenantId, deletedAt: null, ...(request.query.siteId ? { siteId: request.query.siteId } : {}) },
      orderBy: { createdAt: 'asc' },
    });
    return { pools: rows.map(poolView) };
  });

  app.get(
    '/v1/pools/:poolId',
    { schema: { tags: ['pools'], params: poolParamsSchema, querystring: tenantQuerySchema, response: { 200: poolSchema } } },
    async (request) => {
      authorize(request, 'compute:sites:read', request.query.tenantId);
      return poolView(await findOwnedPool(ctx.db, request.query.tenantId, request.params.poolId));
    },
  );

  app.patch(
    '/v1/pools/:poolId',
    { schema: { tags: ['pools'], params: poolParamsSchema, body: poolUpdateSchema, response: { 200: poolSchema } } },
    async (request) => {
      authorize(request, 'compute:sites:manage', request.body.tenantId);
      return updatePool(ctx.db, request.params.poolId, request.body);
    },
  );

  app.delete('/v1/pools/:poolId', { schema: { tags: ['pools'], params: poolParamsSchema, querystring: tenantQuerySchema } }, async (request) => {
    authorize(request, 'compute:sites:manage', request.query.tenantId);
    return deletePool(ctx.db, request.query.tenantId, request.params.poolId);
  });
};
