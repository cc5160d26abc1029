// Profiles (spec 003 "Storing and checking profiles"): create, read, list, update,
// validate (every problem with its path), render (the compiled plan).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  profileIdSchema,
  profileCreateSchema,
  profileVersionSchema,
  profileUpdateSchema,
  profileValidationSchema,
  profileVersionQuerySchema,
  profileViewSchema,
} from '../../core/schemas/profiles';
import { tenantIdSchema } from '../../core/schemas/common';
import { requireTenant } from '../../services/tenants';
import { stepRegistry } from '../../core/steps/builtin';
import { checkProfile } from '../../profiles/check';
import { compileProfile } from '../../profiles/compiler';
import { createProfile, listProfiles, resolveProfile, updateProfile } from '../../profiles/store';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

const params = z.object({ id: profileIdSchema });

export const profileRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post('/v1/profiles', { schema: { tags: ['profiles'], body: profileCreateSchema, response: { 201: profileViewSchema } } }, async (request, reply) => {
    authorize(request, 'compute:profiles:manage', request.body.tenantId);
    await requireTenant(ctx.db, request.body.tenantId);
    return reply.status(201).send(await createProfile(ctx.db, request.body));
  });

  app.get(
    '/v1/profiles',
    {
      schema: {
        tags: ['profiles'],
        querystring: z.object({ tenantId: tenantIdSchema, id: profileIdSchema.optional() }),
        response: { 200: z.object({ profiles: z.array(profileViewSchema) }) },
      },
    },
    async (request) => {
      authorize(request, 'compute:profiles:read', request.query.tenantId);
      return { profiles: await listProfiles(ctx.db, request.query.tenantId, request.query.id) };
    },
  );

  app.get(
    '/v1/profiles/:id',
    { schema: { tags: ['profiles'], params, querystring: profileVersionQuerySchema, response: { 200: profileViewSchema } } },
    async (request) => {
      authorize(request, 'compute:profiles:read', request.query.tenantId);
      return resolveProfile(ctx.db, request.query.tenantId, request.params.id, request.query.version);
    },
  );

  app.get(
    '/v1/profiles/:id/versions/:version',
    {
      schema: {
        tags: ['profiles'],
        params: params.extend({ version: z.coerce.number().pipe(profileVersionSchema) }),
        querystring: z.object({ tenantId: tenantIdSchema }),
        response: { 200: profileViewSchema },
      },
    },
    async (request) => {
      authorize(request, 'compute:profiles:read', request.query.tenantId);
      return resolveProfile(ctx.db, request.query.tenantId, request.params.id, request.params.version);
    },
  );

  app.patch(
    '/v1/profiles/:id',
    { schema: { tags: ['profiles'], params, body: profileUpdateSchema, response: { 200: profileViewSchema } } },
    async (request) => {
      authorize(request, 'compute:profiles:manage', request.body.tenantId);
      return updateProfile(ctx.db, { ...request.body, id: request.params.id });
    },
  );

  app.post(
    '/v1/profiles/:id/validate',
    {
      schema: {
        tags: ['profiles'],
        params,
        body: z.object({ tenantId: tenantIdSchema, version: profileVersionSchema.optional() }).strict(),
        response: { 200: profileValidationSchema },
      },
    },
    async (request) => {
      authorize(request, 'compute:profiles:read', request.body.tenantId);
      const profile = await resolveProfile(ctx.db, request.body.tenantId, request.params.id, request.body.version);
      const { problems } = checkProfile(profile.document, stepRegistry);
      return { id: profile.id, version: profile.version, valid: problems.length === 0, problems };
    },
  );

  app.get('/v1/profiles/:id/render', { schema: { tags: ['profiles'], params, querystring: profileVersionQuerySchema } }, async (request) => {
    authorize(request, 'compute:profiles:read', request.query.tenantId);
    const profile = await resolveProfile(ctx.db, request.query.tenantId, request.params.id, request.query.version);
    return compileProfile(profile.document, profile.tenantId);
  });
};
