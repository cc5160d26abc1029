// POST /v1/agents/boot-secret: a boot entry's discovery token for the site agent serving
// it; POST /v1/agents/boot-secret/release: boot.cleanUp revokes the workflow's tokens and
// deletes their stored bearers (services/boot/discovery-tokens.ts). Signed agent requests.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { grantBootSecret, releaseBootSecrets } from '../../services/boot/discovery-tokens';
import { loadOrCreateNodeCa } from '../../services/pki/node-ca';
import { bootSecretAnswerSchema, bootSecretReleaseAnswerSchema, bootSecretReleaseSchema, bootSecretRequestSchema } from '../../core/schemas/agent-boot-secret';
import { authenticateAgentRequest, keepRawJsonBodies } from '../agent-auth';
import type { ApiContext } from '../context';

export const agentBootSecretRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const ca = await loadOrCreateNodeCa(ctx.db, ctx.secrets, ctx.config.dataDir);
  keepRawJsonBodies(app);

  app.post(
    '/v1/agents/boot-secret',
    { schema: { tags: ['agents'], security: [], body: bootSecretRequestSchema, response: { 200: bootSecretAnswerSchema } } },
    async (request) => {
      const agent = await authenticateAgentRequest(ctx.db, ca, request, 'boot-secret');
      return grantBootSecret(ctx, agent, request.body);
    },
  );

  app.post(
    '/v1/agents/boot-secret/release',
    { schema: { tags: ['agents'], security: [], body: bootSecretReleaseSchema, response: { 200: bootSecretReleaseAnswerSchema } } },
    async (request) => {
      const agent = await authenticateAgentRequest(ctx.db, ca, request, 'boot-secret-release');
      return releaseBootSecrets(ctx.db, agent, request.body);
    },
  );
};
