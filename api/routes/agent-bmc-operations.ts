// POST /v1/agents/bmc-operations/get and /put: the BMC operation ledger a site's agents
// share (services/bmc-operations.ts). Authenticated by the agent's certificate and request
// signature; only a site agent of the machine's site, for a running step of that machine.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getBmcOperation, putBmcOperation } from '../../services/bmc-operations';
import { bmcOperationAnswerSchema, bmcOperationGetSchema, bmcOperationPutSchema } from '../../core/schemas/agent-bmc-operations';
import type { ApiContext } from '../context';

export const agentBmcOperationRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/bmc-operations/get',
    {
      config: { agentPurpose: 'bmc-operations' },
      schema: { tags: ['agents'], security: [], body: bmcOperationGetSchema, response: { 200: bmcOperationAnswerSchema } },
    },
    async (request) => getBmcOperation(ctx, request.agent, request.body),
  );

  app.post(
    '/bmc-operations/put',
    {
      config: { agentPurpose: 'bmc-operations' },
      schema: { tags: ['agents'], security: [], body: bmcOperationPutSchema, response: { 200: bmcOperationAnswerSchema } },
    },
    async (request) => putBmcOperation(ctx, request.agent, request.body),
  );
};
