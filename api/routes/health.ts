// GET /healthz: is the database reachable, is Temporal reachable.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { databaseTarget } from '../../core/database-target';
import { healthSchema } from '../../core/schemas/system';
import type { ApiContext } from '../context';

function webUiUrl(ctx: ApiContext): string {
  const host = ctx.config.temporal.address.split(':')[0] ?? '127.0.0.1';
  return `http://${host}:${ctx.config.temporal.uiPort}`;
}

export const healthRoutes: FastifyPluginAsyncZod<ApiContext> = async (app, ctx) => {
  app.get('/healthz', { schema: { tags: ['system'], response: { 200: healthSchema, 503: healthSchema } } }, async (_request, reply) => {
    const provider = databaseTarget(ctx.config).provider;
    const database = await ctx.db.$queryRawUnsafe('SELECT 1').then(
      () => ({ ok: true, provider }),
      (err: Error) => ({ ok: false, provider, error: err.message }),
    );
    const temporal = await ctx.temporal.connection.workflowService.getSystemInfo({}).then(
      () => ({ ok: true }),
      (err: Error) => ({ ok: false, error: err.message }),
    );
    const body = {
      status: database.ok && temporal.ok ? ('ok' as const) : ('degraded' as const),
      database,
      temporal: { ...temporal, address: ctx.config.temporal.address, namespace: ctx.config.temporal.namespace, webUi: webUiUrl(ctx) },
    };
    return reply.status(body.status === 'ok' ? 200 : 503).send(body);
  });
};
