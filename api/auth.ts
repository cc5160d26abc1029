// Authentication (bearer credential → principal) and the per-route permission check.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate, type Principal } from '../services/credentials';
import { IronflowError } from '../core/errors';
import { grants, ROOT_TENANT, type Permission } from '../core/permissions';
import type { ApiContext } from './context';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * Every route of the calling plugin's scope takes an API credential: authenticated on
 * request, before its body is read. The routes outside (health, join, the agent API, the
 * console, the docs) authenticate otherwise or not at all (api/routes/index.ts).
 */
export function requireCredential(app: FastifyInstance, ctx: ApiContext): void {
  app.addHook('onRequest', async (request) => {
    request.principal = await authenticate(ctx.db, request.headers.authorization);
  });
}

/**
 * The caller may act for `tenantId` with `permission`. The root tenant's credentials act
 * for every tenant (operators); others only for their own.
 */
export function authorize(request: FastifyRequest, permission: Permission, tenantId: string): Principal {
  const principal = request.principal;
  if (!principal) throw new IronflowError('UNAUTHENTICATED', 'no credential');
  if (principal.tenantId !== tenantId && principal.tenantId !== ROOT_TENANT) {
    throw new IronflowError('PERMISSION_DENIED', `this credential belongs to tenant ${principal.tenantId}, not ${tenantId}`, { tenantId });
  }
  if (!grants(principal.permissions, permission)) {
    throw new IronflowError('PERMISSION_DENIED', `this credential lacks ${permission}`, { permission });
  }
  return principal;
}
