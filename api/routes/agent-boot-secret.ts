// POST /v1/agents/boot-secret: a boot entry's discovery token for the site agent serving
// it; POST /v1/agents/boot-secret/release: boot.cleanUp revokes the workflow's tokens and
// deletes their stored bearers (services/boot/discovery-tokens.ts). Signed agent requests.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { grantBootSecret, releaseBootSecrets } from '../../services/boot/discovery-tokens';
import { bootSecretAnswerSchema, bootSecretReleaseAnswerSchema, bootSecretReleaseSchema, bootSecretRequestSchema } from '../../core/schemas/agent-boot-secret';
import type { ApiContext } from '../context';

export const agentBootSecretRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/boot-secret',
    {
      config: { agentPurpose: 'boot-secret' },
      schema: { tags: ['agents'], security: [], body: bootSecretRequestSchema, response: { 200: bootSecretAnswerSchema } },
    },
    async (request) => grantBootSecret(ctx, request.agent, request.body),
  );

  app.post(
    '/boot-secret/release',
    {
      config: { agentPurpose: 'boot-secret-release' },
      schema: { tags: ['agents'], security: [], body: bootSecretReleaseSchema, response: { 200: bootSecretReleaseAnswerSchema } },
    },
    async (request) => releaseBootSecrets(ctx.db, request.agent, request.body),
  );
};
