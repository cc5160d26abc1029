// metal.adoptToken: POST /v1/metal/adopt-tokens mints a pool's adopt token (decided as
// compute:nodes:provision on the tenant). The machine then joins with `ironflow agent node
// --server URL --token-file FILE` and no --node-id.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { createAdoptToken } from '../../services/metal/adopt-token';
import { adoptTokenCreateSchema, adoptTokenSchema } from '../../core/schemas/adopt';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const metalAdoptRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/v1/metal/adopt-tokens',
    { schema: { tags: ['metal'], body: adoptTokenCreateSchema, response: { 201: adoptTokenSchema } } },
    async (request, reply) => {
      authorize(request, 'compute:nodes:provision', request.body.tenantId);
      return reply.status(201).send(await createAdoptToken(ctx.db, request.body));
    },
  );
};
