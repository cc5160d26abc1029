// Every error leaves as { error: { code, message, details } } with the spec's code and the
// HTTP status DESIGN.md maps it to. Unknown errors are logged, never echoed.
import type { FastifyError, FastifyInstance } from 'fastify';
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
    return new IronflowError('INVALID_INPUT', `${path || (error as { validationContext?: string }).validationContext || 'input'}: ${first?.message ?? 'invalid'}`, { path });
  }
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.statusCode === 413) return new IronflowError('INVALID_INPUT', 'request body too large', {});
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new IronflowError('INVALID_INPUT', fastifyError.message ?? 'bad request', {});
  }
  return new IronflowError('INTERNAL', 'internal error; the server log has the request id', {});
}

/** An INTERNAL answer names the request and where its cause was logged (never the cause itself). */
function internalError(requestId: string, logFile: string | undefined): IronflowError {
  const where = logFile ? `the API's log ${logFile} has its cause under that request id` : 'the API runs without a log file (start it with one to see the cause)';
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
