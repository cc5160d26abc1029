// The agent API, /v1/agents/…: what site, node and ramdisk agents call, each request
// authenticated by the agent's node certificate and a signature over its exact bytes
// (api/agent-auth.ts), never by an API credential. One preHandler authenticates every route
// here (after the body is validated, before the route runs) and sets request.agent; each
// route names its purpose (config.agentPurpose), which a refused agent's event carries.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { authenticateAgentRequest, keepRawJsonBodies } from '../agent-auth';
import type { ApiContext } from '../context';
import { agentBmcAccessRoutes } from './agent-bmc-access';
import { agentBmcOperationRoutes } from './agent-bmc-operations';
import { agentBootSecretRoutes } from './agent-boot-secret';
import { agentQuorumRefusalRoutes } from './agent-quorum-refusals';
import { agentSessionRoutes } from './agent-sessions';
import { agentUserDataRoutes } from './agent-user-data';

export const AGENT_API_PREFIX = '/v1/agents';

const agentRouteGroups = [
  agentSessionRoutes,
  agentBmcAccessRoutes,
  agentBmcOperationRoutes,
  agentBootSecretRoutes,
  agentUserDataRoutes,
  agentQuorumRefusalRoutes,
];

/** The plugin, registered with `prefix: AGENT_API_PREFIX` (its options are only Fastify's, so the prefix is not handed on to its route groups). */
export const agentApi =
  (ctx: ApiContext): FastifyPluginAsyncZod =>
  async (app) => {
    keepRawJsonBodies(app);
    app.addHook('onRoute', (route) => {
      if (!route.config?.agentPurpose) throw new Error(`${route.url}: an agent route names its purpose in config.agentPurpose (api/routes/agents.ts)`);
    });
    app.addHook('preHandler', async (request) => {
      request.agent = await authenticateAgentRequest(ctx.db, ctx.nodeCa, request, request.routeOptions.config.agentPurpose as string);
    });
    for (const group of agentRouteGroups) await app.register(group, ctx);
  };
