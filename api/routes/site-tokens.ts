// siteTokens.create / revoke: join tokens of role `site` (spec 001).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { tenantQuerySchema } from '../../core/schemas/common';
import { siteParamsSchema } from '../../core/schemas/sites';
import { siteTokenCreateSchema, siteTokenParamsSchema, siteTokenSchema } from '../../core/schemas/site-tokens';
import { createSiteToken } from '../../services/site-tokens/create-site-token';
import { revokeSiteToken } from '../../services/site-tokens/revoke-site-token';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const siteTokenRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/v1/sites/:siteId/tokens',
    { schema: { tags: ['site-tokens'], params: siteParamsSchema, body: siteTokenCreateSchema, response: { 200: siteTokenSchema, 201: siteTokenSchema } } },
    async (request, reply) => {
      authorize(request, 'compute:sites:manage', request.body.tenantId);
      const { token, created } = await createSiteToken(ctx.db, request.params.siteId, request.body);
      return reply.status(created ? 201 : 200).send(token);
    },
  );

  app.delete(
    '/v1/sites/:siteId/tokens/:tokenId',
    { schema: { tags: ['site-tokens'], params: siteTokenParamsSchema, querystring: tenantQuerySchema, response: { 200: siteTokenSchema } } },
    async (request) => {
      authorize(request, 'compute:sites:manage', request.query.tenantId);
      return revokeSiteToken(ctx.db, request.query.tenantId, request.params.siteId, request.params.tokenId);
    },
  );
};
