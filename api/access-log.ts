// One log line per request, written when it is answered: the request (method, URL, remote
// address), the status and the time taken. Fastify's own logging writes two, one on arrival and
// one on answer, which cost a tenth of a read's CPU under load (bench/README.md, the API figure).
import type { FastifyInstance } from 'fastify';

export function registerAccessLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  });
}
