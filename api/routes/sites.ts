// sites.*: create, get, list, update, delete (spec 001, "Sites").
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { tenantQuerySchema } from '../../core/schemas/common';
import { siteAgentsSchema } from '../../core/schemas/site-agents';
import { siteCreateSchema, siteDeletedSchema, siteListSchema, siteParamsSchema, siteSchema, siteUpdateSchema } from '../../core/schemas/sites';
import { createSite } from '../../services/sites/create-site';
import { deleteSite } from '../../services/sites/delete-site';
import { siteAgentsOf } from '../../core/sites/site-agents';
import { findOwnedSite } from '../../core/sites/site-lookup';
import { siteView } from '../../core/sites/site-view';
import { updateSite } from '../../services/sites/update-site';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const siteRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post('/v1/sites', { schema: { tags: ['sites'], body: siteCreateSchema, response: { 200: siteSchema, 201: siteSchema } } }, async (request, reply) => {
    const principal = authorize(request, 'compute:sites:manage', request.body.tenantId);
    const { site, created } = await createSite(ctx.db, principal.credentialId, request.body);
    return reply.status(created ? 201 : 200).send(site);
  });

  app.get('/v1/sites', { schema: { tags: ['sites'], querystring: tenantQuerySchema, response: { 200: siteListSchema } } }, async (request) => {
    authorize(request, 'compute:sites:read', request.query.tenantId);
    const rows = await ctx.db.site.findMany({ where: { ownerTenantId: request.query.tenantId, deletedAt: null }, orderBy: { createdAt: 'asc' } });
    return { sites: rows.map(siteView) };
  });

  app.get(
    '/v1/sites/:siteId',
    { schema: { tags: ['sites'], params: siteParamsSchema, querystring: tenantQuerySchema, response: { 200: siteSchema.extend(siteAgentsSchema.shape) } } },
    async (request) => {
      authorize(request, 'compute:sites:read', request.query.tenantId);
      const site = await findOwnedSite(ctx.db, request.query.tenantId, request.params.siteId);
      return { ...siteView(site), ...(await siteAgentsOf(ctx.db, site.id)) };
    },
  );

  app.patch(
    '/v1/sites/:siteId',
    { schema: { tags: ['sites'], params: siteParamsSchema, body: siteUpdateSchema, response: { 200: siteSchema } } },
    async (request) => {
      authorize(request, 'compute:sites:manage', request.body.tenantId);
      return updateSite(ctx.db, request.params.siteId, request.body);
    },
  );

  app.delete(
    '/v1/sites/:siteId',
    { schema: { tags: ['sites'], params: siteParamsSchema, querystring: tenantQuerySchema, response: { 200: siteDeletedSchema } } },
    async (request) => {
      authorize(request, 'compute:sites:manage', request.query.tenantId);
      return deleteSite(ctx.db, request.query.tenantId, request.params.siteId);
    },
  );
};
