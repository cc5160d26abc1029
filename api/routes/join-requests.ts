// joinRequests: GET /v1/join-requests, POST /v1/join-requests/:id/approve and /reject.
// Deferred discovery joins wait here for an operator (services/joins/join-requests.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { decideJoinRequest, listJoinRequests } from '../../services/joins/join-requests';
import {
  joinRequestDecisionSchema,
  joinRequestListSchema,
  joinRequestParamsSchema,
  joinRequestSchema,
  joinRequestsQuerySchema,
} from '../../core/schemas/join-requests';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const joinRequestRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.get(
    '/v1/join-requests',
    { schema: { tags: ['join-requests'], querystring: joinRequestsQuerySchema, response: { 200: joinRequestListSchema } } },
    async (request) => {
      authorize(request, 'compute:sites:read', request.query.tenantId);
      return { joinRequests: await listJoinRequests(ctx.db, request.query) };
    },
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post(
      `/v1/join-requests/:id/${decision}`,
      { schema: { tags: ['join-requests'], params: joinRequestParamsSchema, body: joinRequestDecisionSchema, response: { 200: joinRequestSchema } } },
      async (request) => {
        const principal = authorize(request, 'compute:sites:manage', request.body.tenantId);
        return decideJoinRequest(ctx.db, { tenantId: request.body.tenantId, id: request.params.id, decision, callerId: principal.credentialId });
      },
    );
  }
};
