// POST /v1/agents/bmc-access: a machine's BMC access for a site agent's running step
// (services/bmc-access.ts); POST /v1/agents/proxy-targets: what site.httpProxy may reach for it.
// Authenticated by the agent's certificate and request signature.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { grantBmcAccess } from '../../services/bmc-access';
import { bmcAccessAnswerSchema, bmcAccessRequestSchema } from '../../core/schemas/agent-bmc-access';
import { proxyTargetsAnswerSchema } from '../../core/schemas/agent-proxy-targets';
import { proxyTargetsFor } from '../../services/proxy-targets';
import type { ApiContext } from '../context';

export const agentBmcAccessRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/bmc-access',
    {
      config: { agentPurpose: 'bmc-access' },
      schema: { tags: ['agents'], security: [], body: bmcAccessRequestSchema, response: { 200: bmcAccessAnswerSchema } },
    },
    async (request) => grantBmcAccess(ctx, request.agent, request.body),
  );

  app.post(
    '/proxy-targets',
    {
      config: { agentPurpose: 'proxy-targets' },
      schema: { tags: ['agents'], security: [], body: bmcAccessRequestSchema, response: { 200: proxyTargetsAnswerSchema } },
    },
    async (request) => proxyTargetsFor(ctx, request.agent, request.body),
  );
};
