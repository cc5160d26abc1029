// The image catalog: register (by digest, optionally signed), read, promote to public.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getImage, listImages, promoteImage, registerImage } from '../../services/images/catalog';
import {
  imageGetQuerySchema,
  imageListQuerySchema,
  imagePageSchema,
  imageParamsSchema,
  imagePromoteSchema,
  imageRegisterObject,
  imageViewSchema,
} from '../../core/schemas/images';
import { authorize } from '../auth';
import type { ApiContext } from '../context';

export const imageRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/v1/images',
    // The route's schema is the plain object (OpenAPI cannot show the signer/signature pairing);
    // registerImage parses the full schema, so the pairing rule is enforced there.
    { schema: { tags: ['images'], body: imageRegisterObject, response: { 200: imageViewSchema, 201: imageViewSchema } } },
    async (request, reply) => {
      authorize(request, 'compute:images:publish', request.body.tenantId);
      const { image, created } = await registerImage(ctx.db, request.body);
      return reply.status(created ? 201 : 200).send(image);
    },
  );

  app.get('/v1/images', { schema: { tags: ['images'], querystring: imageListQuerySchema, response: { 200: imagePageSchema } } }, async (request) => {
    authorize(request, 'compute:images:read', request.query.tenantId);
    return listImages(ctx.db, request.query);
  });

  app.get(
    '/v1/images/:imageId',
    { schema: { tags: ['images'], params: imageParamsSchema, querystring: imageGetQuerySchema, response: { 200: imageViewSchema } } },
    async (request) => {
      authorize(request, 'compute:images:read', request.query.tenantId);
      return getImage(ctx.db, request.query.tenantId, request.params.imageId);
    },
  );

  app.post(
    '/v1/images/:imageId/promote',
    { schema: { tags: ['images'], params: imageParamsSchema, body: imagePromoteSchema, response: { 200: imageViewSchema } } },
    async (request) => {
      authorize(request, 'compute:images:publish', request.body.tenantId);
      return promoteImage(ctx.db, request.body.tenantId, request.params.imageId);
    },
  );
};
