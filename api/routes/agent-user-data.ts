// POST /v1/agents/user-data: a ramdisk fetches the user data of the deploy it runs
// (core/userdata/grant.ts). A signed agent request.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { loadOrCreateNodeCa } from '../../core/pki/node-ca';
import { userDataAnswerSchema, userDataRequestSchema } from '../../core/schemas/agent-user-data';
import { grantUserData } from '../../core/userdata/grant';
import { authenticateAgentRequest, keepRawJsonBodies } from '../agent-auth';
import type { ApiContext } from '../context';

export const agentUserDataRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const ca = await loadOrCreateNodeCa(ctx.db, ctx.secrets, ctx.config.dataDir);
  keepRawJsonBodies(app);

  app.post('/v1/agents/user-data', { schema: { tags: ['agents'], security: [], body: userDataRequestSchema, response: { 200: userDataAnswerSchema } } }, async (request) => {
    const agent = await authenticateAgentRequest(ctx.db, ca, request, 'user-data');
    return grantUserData(ctx, agent, request.body);
  });
};
