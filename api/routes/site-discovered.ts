// GET /v1/sites/:siteId/discovered (metal.discovered, spec 001): the PXE clients the site's
// agents saw in the last 24 h, merged. Decided as compute:sites:read; only the tenant that
// owns the site sees it (any other gets NOT_FOUND: the list describes the site's network).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { listDiscovered } from '../../services/metal/discovered-list';
import { tenantQuerySchema } from '../../core/schemas/common';
import { discoveredListSchema } from '../../core/schemas/discovery';
import { siteParamsSchema } from '../../core/schemas/sites';
import { findOwnedSite } from '../../core/sites/site-lookup';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const siteDiscoveredRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.get(
    '/v1/sites/:siteId/discovered',
    {
      schema: {
        tags: ['metal'],
        summary: 'metal.discovered',
        params: siteParamsSchema,
        querystring: tenantQuerySchema,
        response: { 200: discoveredListSchema },
      },
    },
    async (request) => {
      authorize(request, 'compute:sites:read', request.query.tenantId);
      const site = await findOwnedSite(ctx.db, request.query.tenantId, request.params.siteId);
      return { items: await listDiscovered(ctx.db, site.id) };
    },
  );
};
