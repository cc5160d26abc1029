// POST /v1/agents/bmc-operations/get and /put: the BMC operation ledger a site's agents
// share (services/bmc-operations.ts). Authenticated by the agent's certificate and request
// signature; only a site agent of the machine's site, for a running step of that machine.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getBmcOperation, putBmcOperation } from '../../services/bmc-operations';
import { loadOrCreateNodeCa } from '../../services/pki/node-ca';
import { bmcOperationAnswerSchema, bmcOperationGetSchema, bmcOperationPutSchema } from '../../core/schemas/agent-bmc-operations';
import { authenticateAgentRequest, keepRawJsonBodies } from '../agent-auth';
import type { ApiContext } from '../context';

export const agentBmcOperationRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  const ca = await loadOrCreateNodeCa(ctx.db, ctx.secrets, ctx.config.dataDir);
  keepRawJsonBodies(app);

  app.post(
    '/v1/agents/bmc-operations/get',
    { schema: { tags: ['agents'], security: [], body: bmcOperationGetSchema, response: { 200: bmcOperationAnswerSchema } } },
    async (request) => {
      const agent = await authenticateAgentRequest(ctx.db, ca, request, 'bmc-operations');
      return getBmcOperation(ctx, agent, request.body);
    },
  );

  app.post(
    '/v1/agents/bmc-operations/put',
    { schema: { tags: ['agents'], security: [], body: bmcOperationPutSchema, response: { 200: bmcOperationAnswerSchema } } },
    async (request) => {
      const agent = await authenticateAgentRequest(ctx.db, ca, request, 'bmc-operations');
      return putBmcOperation(ctx, agent, request.body);
    },
  );
};
