// GET /v1/events: the tenant's event log, paged by a cursor (the last seq seen).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { listEvents } from '../../services/events';
import { eventsPageSchema, eventsQuerySchema } from '../../core/schemas/events';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const eventRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.get('/v1/events', { schema: { tags: ['events'], querystring: eventsQuerySchema, response: { 200: eventsPageSchema } } }, async (request) => {
    authorize(request, 'compute:events:read', request.query.tenantId);
    return listEvents(ctx.db, request.query);
  });
};
