// Every API answer's latency, by method, route pattern (never the raw URL: ids would make a
// series each) and status, for GET /metrics.
import type { FastifyInstance } from 'fastify';
import { apiRequestSeconds } from '../services/metrics/registry';

export function registerRequestMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    apiRequestSeconds.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}
