// The error answers in the OpenAPI document: every route may answer the spec's error shape
// under the statuses core/errors.ts maps its codes to, so generated clients know it. Only the
// document gets them: the error handler (api/error-handler.ts) writes these answers itself.
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { errorCodes, httpStatusOf, type ErrorCode } from '../core/errors';
import { errorSchemaOf } from '../core/schemas/common';

const codesByStatus = new Map<number, [ErrorCode, ...ErrorCode[]]>();
for (const code of errorCodes) {
  const status = httpStatusOf[code];
  codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code] as [ErrorCode, ...ErrorCode[]]);
}

const errorResponses = Object.fromEntries(
  [...codesByStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [status, errorSchemaOf(codes).describe(`An error: ${codes.join(', ')}`)]),
);

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

/** jsonSchemaTransform, with the error answers added to each route's own responses. */
export function withErrorResponses(input: TransformInput): ReturnType<typeof jsonSchemaTransform> {
  const response = (input.schema?.response ?? {}) as Record<string, unknown>;
  return jsonSchemaTransform({ ...input, schema: { ...input.schema, response: { ...errorResponses, ...response } } });
}
