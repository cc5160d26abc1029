// POST /v1/agents/bmc-access: a machine's BMC access for a site agent's running step
// (services/bmc-access.ts); POST /v1/agents/proxy-targets: what site.httpProxy may reach for it.
// Authenticated by the agent's certificate and request signature.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { grantBmcAccess } from '../../services/bmc-access';
import { loadOrCreateNodeCa } from '../../services/pki/node-ca';
import { bmcAccessAnswerSchema, bmcAccessRequestSchema } from '../../core/schemas/agent-bmc-access';
import { proxyTargetsAnswerSchema } from '../../core/schemas/agent-proxy-targets';
import { proxyTargetsFor } from '../../services/proxy-targets';
import { authenticateAgentRequest, keepRawJsonBodies } from '../agent-auth';
import type { ApiContext } from '../context';

export const agentBmcAccessRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const ca = await loadOrCreateNodeCa(ctx.db, ctx.secrets, ctx.config.dataDir);
  keepRawJsonBodies(app);

  app.post(
    '/v1/agents/bmc-access',
    { schema: { tags: ['agents'], security: [], body: bmcAccessRequestSchema, response: { 200: bmcAccessAnswerSchema } } },
    async (request) => {
      const agent = await authenticateAgentRequest(ctx.db, ca, request, 'bmc-access');
      return grantBmcAccess(ctx, agent, request.body);
    },
  );

  app.post(
    '/v1/agents/proxy-targets',
    { schema: { tags: ['agents'], security: [], body: bmcAccessRequestSchema, response: { 200: proxyTargetsAnswerSchema } } },
    async (request) => {
      const agent = await authenticateAgentRequest(ctx.db, ca, request, 'proxy-targets');
      return proxyTargetsFor(ctx, agent, request.body);
    },
  );
};
