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

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'INTERNAL') request.log.error({ err: error }, 'unhandled error');
    return reply.status(httpStatusOf[apiError.code]).send({ error: apiError.toJSON() });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: new IronflowError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`).toJSON() }),
  );
}
