// Building blocks of input schemas, shared by the API, the CLI and OpenAPI.
import { z } from 'zod';
import { errorCodes, type ErrorCode } from '../errors';
import { idPattern, type IdKind } from '../id-format';
import { normalizeMac } from '../mac';

export const tenantIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'a tenant id is lower-case letters, digits and dashes');

export const idOf = (kind: IdKind) => z.string().regex(idPattern(kind), `expected a ${kind} id`);

export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

/** Where a listener binds: `host:port`, an IPv6 host in brackets (`[::1]:9466`). */
export const listenAddressSchema = z
  .string()
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'host:port such as 127.0.0.1:9466')
  .refine((address) => Number(address.slice(address.lastIndexOf(':') + 1)) <= 65_535, 'the port must be 0 to 65535');

/** A unicast MAC in any usual spelling (core/mac.ts), parsed into one: lower-case, colon-separated. */
export const macSchema = z
  .string()
  .max(32)
  .refine((v) => normalizeMac(v) !== undefined, 'a unicast MAC address such as b8:ce:f6:00:00:01')
  .transform((v) => normalizeMac(v) as string);

/** An error answer with one of these codes: a message naming the fix, details (details.path: the offending field). */
export const errorSchemaOf = (codes: readonly [ErrorCode, ...ErrorCode[]]) =>
  z.object({ error: z.object({ code: z.enum(codes), message: z.string(), details: z.record(z.string(), z.unknown()) }) });

export const errorSchema = errorSchemaOf(errorCodes);

/**
 * A label key, and every name of the same syntax (pool names and classes, hardware profiles,
 * driver choices): lower-case letters, digits, dots, dashes and underscores.
 */
export const labelKeySchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case letters, digits, dots, dashes and underscores');

/** Labels are copied into every step's input: a bounded number of them keeps workflow histories small. */
const MAX_LABELS = 64;

/** A machine's labels, which steps' `when` expressions read (core/label-expr.ts): the one rule for every input that carries them. */
export const labelsSchema = z
  .record(labelKeySchema, z.string().max(256))
  .refine((labels) => Object.keys(labels).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`);

export const tenantQuerySchema = z.object({ tenantId: tenantIdSchema });
