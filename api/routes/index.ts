// Every route, one Fastify plugin per route group with its schemas: the public groups, the
// agent API (certificate-bound signed requests, its own plugin under /v1/agents), the
// operator console (its own sign-in), and the API credential's scope, in which every route
// authenticates its caller's bearer before anything else runs.
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { consoleRoutes } from '../../console/plugin';
import { requireCredential } from '../auth';
import type { ApiContext } from '../context';
import { AGENT_API_PREFIX, agentApi } from './agents';
import { credentialRoutes } from './credentials';
import { eventRoutes } from './events';
import { healthRoutes } from './health';
import { imageRoutes } from './images';
import { joinRoutes } from './join';
import { joinRequestRoutes } from './join-requests';
import { metalRoutes } from './metal';
import { metalAdoptRoutes } from './metal-adopt';
import { metalMaintenanceRoutes } from './metal-maintenance';
import { metalStatusRoutes } from './metal-status';
import { metricsRoutes } from './metrics';
import { poolRoutes } from './pools';
import { profileRoutes } from './profiles';
import { provisionWorkflowRoutes } from './provision-workflows';
import { quorumRoutes } from './quorum';
import { siteDiscoveredRoutes } from './site-discovered';
import { siteTokenRoutes } from './site-tokens';
import { siteRoutes } from './sites';
import { systemCheckRoutes } from './system-checks';
import { tenantRoutes } from './tenants';

const credentialedRouteGroups = [
  metricsRoutes,
  eventRoutes,
  tenantRoutes,
  credentialRoutes,
  systemCheckRoutes,
  imageRoutes,
  siteRoutes,
  siteTokenRoutes,
  poolRoutes,
  joinRequestRoutes,
  profileRoutes,
  provisionWorkflowRoutes,
  metalRoutes,
  metalMaintenanceRoutes,
  metalAdoptRoutes,
  metalStatusRoutes,
  quorumRoutes,
  siteDiscoveredRoutes,
];

/** The routes an API credential calls (a bearer in Authorization), in one authenticated scope. */
const credentialedApi: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  requireCredential(app, ctx);
  for (const group of credentialedRouteGroups) await app.register(group, ctx);
};

export async function registerRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  // Without an API credential: liveness; join (a join token or the current certificate in the body).
  await app.register(healthRoutes, ctx);
  await app.register(joinRoutes, ctx);
  await app.register(agentApi(ctx), { prefix: AGENT_API_PREFIX });
  await app.register(consoleRoutes, ctx);
  await app.register(credentialedApi, ctx);
}
