// The route groups, one Fastify plugin each, with its schemas (and the operator console's pages).
import { consoleRoutes } from '../../console/plugin';
import { agentBmcAccessRoutes } from './agent-bmc-access';
import { agentBmcOperationRoutes } from './agent-bmc-operations';
import { agentBootSecretRoutes } from './agent-boot-secret';
import { agentSessionRoutes } from './agent-sessions';
import { agentUserDataRoutes } from './agent-user-data';
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

export const routeGroups = [
  healthRoutes,
  metricsRoutes,
  eventRoutes,
  tenantRoutes,
  credentialRoutes,
  systemCheckRoutes,
  imageRoutes,
  siteRoutes,
  siteTokenRoutes,
  poolRoutes,
  joinRoutes,
  joinRequestRoutes,
  agentSessionRoutes,
  agentBmcAccessRoutes,
  agentBmcOperationRoutes,
  agentBootSecretRoutes,
  agentUserDataRoutes,
  profileRoutes,
  provisionWorkflowRoutes,
  metalRoutes,
  metalMaintenanceRoutes,
  metalAdoptRoutes,
  metalStatusRoutes,
  quorumRoutes,
  siteDiscoveredRoutes,
  consoleRoutes,
];
