// Every error leaves as { error: { code, message, details } } with the spec's code and the
// HTTP status DESIGN.md maps it to. Unknown errors are logged, never echoed.
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { httpStatusOf, IronflowError, isIronflowError } from '../core/errors';

/** `/steps/2/timeout` → `steps[2].timeout`, prefixed by where it came from (body, query…). */
function instancePathToPath(instancePath: string): string {
  return instancePath
    .split('/')
    .filter(Boolean)
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

export function toApiError(error: unknown): IronflowError {
  if (isIronflowError(error)) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0];
    const path = first ? instancePathToPath(first.instancePath) : '';
    return new IronflowError(
      'INVALID_INPUT',
      `${path || (error as { validationContext?: string }).validationContext || 'input'}: ${first?.message ?? 'invalid'}`,
      { path },
    );
  }
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.statusCode === 413) return new IronflowError('INVALID_INPUT', 'body: request body too large', { path: 'body' });
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    // The content-type parsers' refusals (no parser for the type, empty or malformed JSON, a __proto__ key) are about the body as a whole.
    const aboutBody = fastifyError.code?.startsWith('FST_ERR_CTP_') === true;
    return new IronflowError('INVALID_INPUT', `${aboutBody ? 'body: ' : ''}${fastifyError.message ?? 'bad request'}`, aboutBody ? { path: 'body' } : {});
  }
  return new IronflowError('INTERNAL', 'internal error; the server log has the request id', {});
}

/** An INTERNAL answer names the request and where its cause was logged (never the cause itself). */
function internalError(requestId: string, logFile: string | undefined): IronflowError {
  const where = logFile
    ? `the API's log ${logFile} has its cause under that request id`
    : 'the API runs without a log file (start it with one to see the cause)';
  return new IronflowError('INTERNAL', `internal error in request ${requestId}; ${where}`, { requestId });
}

export function registerErrorHandler(app: FastifyInstance, logFile?: string): void {
  app.setErrorHandler((error, request, reply) => {
    let apiError = toApiError(error);
    if (apiError.code === 'INTERNAL') {
      request.log.error({ err: error }, 'unhandled error');
      apiError = internalError(request.id, logFile);
    }
    return reply.status(httpStatusOf[apiError.code]).send({ error: apiError.toJSON() });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: new IronflowError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`).toJSON() }),
  );
}

/**
 * What Fastify answers before any route runs (a malformed percent-encoding, a path segment
 * longer than the router takes), in the API's shape: it would otherwise answer its own shape
 * and echo the whole path.
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new IronflowError('INVALID_INPUT', 'url: a path segment is longer than any id this API takes', { path: 'url', reason: 'segment-too-long' })
      : new IronflowError('INVALID_INPUT', 'url: not a valid URL (a malformed percent-encoding?)', { path: 'url', reason: 'bad-url' });
  void reply.status(httpStatusOf[apiError.code]).send({ error: apiError.toJSON() });
}

/** A request Node's HTTP parser refuses (bad framing, oversized headers, too slow): answered in the API's shape, then the connection closed. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const reason = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request-timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? 'headers-too-large' : 'malformed-http';
  const body = JSON.stringify({
    error: new IronflowError('INVALID_INPUT', `request: not a well-formed HTTP request (${reason})`, { path: 'request', reason }).toJSON(),
  });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
