// Tenants (root operators only). API credentials have their own routes (credentials.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { IronflowError } from '../../core/errors';
import { BUILTIN_TENANT, ROOT_TENANT } from '../../core/permissions';
import { tenantCreateSchema } from '../../core/schemas/tenants';
import { createTenant } from '../../services/tenants';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const tenantRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post('/v1/tenants', { schema: { tags: ['tenants'], body: tenantCreateSchema } }, async (request, reply) => {
    authorize(request, 'compute:tenants:manage', ROOT_TENANT);
    if (request.body.id === BUILTIN_TENANT) throw new IronflowError('INVALID_INPUT', `${BUILTIN_TENANT} is reserved for shipped profiles`, { path: 'id' });
    const { tenant, created } = await createTenant(ctx.db, request.body);
    return reply.status(created ? 201 : 200).send(tenant);
  });
};
