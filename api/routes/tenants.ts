// Tenants and API credentials (root operators only).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { createCredential, ensureTenant } from '../../core/credentials';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../../core/events';
import { BUILTIN_TENANT, ROOT_TENANT } from '../../core/permissions';
import { credentialCreatedSchema, credentialCreateSchema, tenantCreateSchema } from '../../core/schemas/tenants';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const tenantRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post('/v1/tenants', { schema: { tags: ['tenants'], body: tenantCreateSchema } }, async (request, reply) => {
    authorize(request, 'compute:tenants:manage', ROOT_TENANT);
    if (request.body.id === BUILTIN_TENANT) throw new IronflowError('INVALID_INPUT', `${BUILTIN_TENANT} is reserved for shipped profiles`, { path: 'id' });
    await ctx.db.$transaction(async (tx) => {
      await ensureTenant(tx, request.body.id, request.body.name);
      await appendEvent(tx, { tenantId: request.body.id, type: 'tenant.created', subjectId: request.body.id });
    });
    return reply.status(201).send({ id: request.body.id, name: request.body.name });
  });

  app.post(
    '/v1/credentials',
    { schema: { tags: ['tenants'], body: credentialCreateSchema, response: { 201: credentialCreatedSchema } } },
    async (request, reply) => {
      authorize(request, 'compute:tenants:manage', ROOT_TENANT);
      const { tenantId, name, permissions } = request.body;
      const created = await ctx.db.$transaction(async (tx) => {
        if (!(await tx.tenant.findUnique({ where: { id: tenantId } }))) {
          throw new IronflowError('NOT_FOUND', `tenant ${tenantId} not found; create it first (ironflow tenants create)`, { path: 'tenantId' });
        }
        return createCredential(tx, { tenantId, name, permissions });
      });
      return reply.status(201).send({ id: created.id, tenantId, permissions, credential: created.bearer });
    },
  );
};
