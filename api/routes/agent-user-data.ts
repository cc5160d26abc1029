// POST /v1/agents/user-data: a ramdisk fetches the user data of the deploy it runs
// (services/userdata/grant.ts). A signed agent request. Its own machine's running workflow must
// also be one the control plane started (services/bmc-access.ts workflowStanding), as for every
// step secret: a workflow started straight through Temporal gets nothing.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { unknownWorkflowRefusal, workflowStanding } from '../../services/bmc-access';
import { recordRefusal } from '../../services/joins/refusal';
import { userDataAnswerSchema, userDataRequestSchema } from '../../core/schemas/agent-user-data';
import { grantUserData } from '../../services/userdata/grant';
import type { ApiContext } from '../context';

export const agentUserDataRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.post(
    '/user-data',
    { config: { agentPurpose: 'user-data' }, schema: { tags: ['agents'], security: [], body: userDataRequestSchema, response: { 200: userDataAnswerSchema } } },
    async (request) => {
      const { agent } = request;
      const { nodeId, workflowId, ref } = request.body;
      // Only a ramdisk's own machine is looked at here; grantUserData refuses every other caller.
      const node = agent.role === 'ramdisk' && agent.nodeId === nodeId ? await ctx.db.node.findUnique({ where: { id: nodeId } }) : null;
      if (node && (await workflowStanding(ctx, node, workflowId)) === 'unknown') {
        const subject = { nodeId, workflowId, ref, agentNodeId: agent.nodeId, serial: agent.serial };
        return recordRefusal(ctx.db, 'security.userdata.refused', unknownWorkflowRefusal(workflowId, nodeId), {
          tenantId: agent.tenantId,
          subjectId: nodeId,
          data: subject,
        });
      }
      return grantUserData(ctx, agent, request.body);
    },
  );
};
