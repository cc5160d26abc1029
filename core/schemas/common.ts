// Building blocks of input schemas, shared by the API, the CLI and OpenAPI.
import { z } from 'zod';
import { idPattern, type IdKind } from '../ids';

export const tenantIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'a tenant id is lower-case letters, digits and dashes');

export const idOf = (kind: IdKind) => z.string().regex(idPattern(kind), `expected a ${kind} id`);

export const idempotencyKeySchema = z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

export const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});

/** Labels are copied into every step's input: a bounded number of them keeps workflow histories small. */
export const MAX_LABELS = 64;
export const labelCountOk = (labels: Record<string, string>) => Object.keys(labels).length <= MAX_LABELS;
export const labelCountMessage = `at most ${MAX_LABELS} labels`;

export const tenantQuerySchema = z.object({ tenantId: tenantIdSchema });
