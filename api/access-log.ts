// One log line per request, written when it is answered: the request (method, URL, remote
// address), the status and the time taken. Fastify's own logging writes two, one on arrival and
// one on answer, which cost a tenth of a read's CPU under load (bench/README.md, the API figure).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class AnsweredRequestLog extends LogController {
  override incomingRequest(): void {
    // Nothing on arrival: requestCompleted names the request.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
