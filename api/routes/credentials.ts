// API credentials: mint, list, revoke, rotate, tenant-scoped (another tenant's credential
// is NOT_FOUND). A bearer is in the answer that minted or rotated it, and nowhere else.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { listCredentials, mintCredential, revokeCredential, rotateCredential } from '../../services/credentials';
import {
  credentialCreateSchema,
  credentialListQuerySchema,
  credentialListSchema,
  credentialParamsSchema,
  credentialRevokeSchema,
  credentialRotateSchema,
  credentialSchema,
} from '../../core/schemas/credentials';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const credentialRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/v1/credentials',
    { schema: { tags: ['credentials'], body: credentialCreateSchema, response: { 201: credentialSchema } } },
    async (request, reply) => {
      const principal = authorize(request, 'compute:credentials:manage', request.body.tenantId);
      return reply.status(201).send(await mintCredential(ctx.db, principal, request.body));
    },
  );

  app.get(
    '/v1/credentials',
    { schema: { tags: ['credentials'], querystring: credentialListQuerySchema, response: { 200: credentialListSchema } } },
    async (request) => {
      authorize(request, 'compute:credentials:read', request.query.tenantId);
      return listCredentials(ctx.db, request.query.tenantId, request.query);
    },
  );

  app.post(
    '/v1/credentials/:credentialId/revoke',
    { schema: { tags: ['credentials'], params: credentialParamsSchema, body: credentialRevokeSchema, response: { 200: credentialSchema } } },
    async (request) => {
      const principal = authorize(request, 'compute:credentials:manage', request.body.tenantId);
      return revokeCredential(ctx.db, principal, request.body.tenantId, request.params.credentialId);
    },
  );

  app.post(
    '/v1/credentials/:credentialId/rotate',
    { schema: { tags: ['credentials'], params: credentialParamsSchema, body: credentialRotateSchema, response: { 200: credentialSchema } } },
    async (request) => {
      const principal = authorize(request, 'compute:credentials:manage', request.body.tenantId);
      return rotateCredential(ctx.db, principal, request.body.tenantId, request.params.credentialId, request.body);
    },
  );
};
