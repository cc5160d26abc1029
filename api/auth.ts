// Authentication (bearer credential → principal) and the per-route permission check.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
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
 * Routes without a credential: health and the API docs. Agents' routes authenticate by
 * certificate; the console's pages by its own sign-in session (console/session.ts).
 */
const publicPrefixes = ['/healthz', '/docs', '/v1/join', '/v1/agents', '/console'];

export const authPlugin = fp(async (app: FastifyInstance, ctx: ApiContext) => {
  app.addHook('onRequest', async (request) => {
    if (publicPrefixes.some((p) => request.url === p || request.url.startsWith(`${p}/`) || request.url.startsWith(`${p}?`))) return;
    request.principal = await authenticate(ctx.db, request.headers.authorization);
  });
});

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
