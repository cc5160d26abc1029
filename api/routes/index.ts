// The route groups, one Fastify plugin each, with its schemas.
import { eventRoutes } from './events';
import { healthRoutes } from './health';
import { imageRoutes } from './images';
import { systemCheckRoutes } from './system-checks';
import { tenantRoutes } from './tenants';

export const routeGroups = [healthRoutes, eventRoutes, tenantRoutes, systemCheckRoutes, imageRoutes];
