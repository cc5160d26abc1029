// POST /v1/agents/quorum-refusals: an agent reports a destructive command it refused for want
// of a quorum (docs/quorum.md; services/quorum/refusal-report.ts). A signed agent request.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { recordAgentRefusal } from '../../services/quorum/refusal-report';
import { quorumRefusalReportSchema } from '../../services/schemas/quorum';
import type { ApiContext } from '../context';

export const agentQuorumRefusalRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/quorum-refusals',
    {
      config: { agentPurpose: 'quorum-refusal' },
      schema: { tags: ['agents'], security: [], body: quorumRefusalReportSchema, response: { 200: z.object({ recorded: z.literal(true) }) } },
    },
    async (request) => recordAgentRefusal(ctx.db, request.agent, request.body),
  );
};
