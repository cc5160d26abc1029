// The error model every module shares: the spec's codes, a message that names the fix,
// and details (details.path names the offending field of an input).
import type { z } from 'zod';

export const errorCodes = [
  'INVALID_INPUT',
  'INVALID_CONFIG',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'CONFLICT',
  'INVALID_STATE',
  'UNSUPPORTED',
  'UNVERIFIED_WIPE',
  'DRIVER_ERROR',
  'NO_SITE_AGENT',
  'INTERNAL',
  /** A source refused too often (join, agent routes): wait for the Retry-After header. */
  'RATE_LIMITED',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export const httpStatusOf: Record<ErrorCode, number> = {
  INVALID_INPUT: 400,
  INVALID_CONFIG: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_STATE: 409,
  UNVERIFIED_WIPE: 409,
  UNSUPPORTED: 422,
  DRIVER_ERROR: 502,
  NO_SITE_AGENT: 503,
  INTERNAL: 500,
  RATE_LIMITED: 429,
};

/**
 * The one retry rule: a code that says the problem passes (a busy database, a lost agent, a
 * BMC's hiccup, a refusal to wait out) is retried; every other code is the answer. A step
 * that must not be tried twice (it would repeat a power cycle) says so in its failure.
 */
const transientCodes: ReadonlySet<ErrorCode> = new Set(['INTERNAL', 'CONFLICT', 'DRIVER_ERROR', 'NO_SITE_AGENT', 'RATE_LIMITED']);
export const retryable = (code: string): boolean => transientCodes.has(code as ErrorCode);
/** For a RetryPolicy's nonRetryableErrorTypes. */
export const nonRetryableCodes: readonly ErrorCode[] = errorCodes.filter((code) => !retryable(code));

export type ErrorDetails = Record<string, unknown> & { path?: string };

export interface IronflowErrorOptions {
  /** Never retried whatever its code: another attempt would repeat what failed (ensureRamdisk's join deadline reuses its power cycle and only waits again). */
  neverRetry?: boolean;
}

export class IronflowError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  readonly neverRetry: boolean;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options: IronflowErrorOptions = {}) {
    super(message);
    this.name = 'IronflowError';
    this.code = code;
    this.details = details;
    this.neverRetry = options.neverRetry === true;
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isIronflowError(value: unknown): value is IronflowError {
  return value instanceof IronflowError;
}

/** `steps[2].timeout` from ['steps', 2, 'timeout']. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

export interface PathIssue {
  path: string;
  message: string;
}

export function zodIssues(error: z.ZodError): PathIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

/** The first problem of a zod error, as INVALID_INPUT (API) or INVALID_CONFIG (code, files). */
export function fromZodError(error: z.ZodError, code: 'INVALID_INPUT' | 'INVALID_CONFIG' = 'INVALID_INPUT', prefix = ''): IronflowError {
  const issues = zodIssues(error);
  const first = issues[0] ?? { path: '', message: 'invalid' };
  const path = prefix && first.path ? `${prefix}.${first.path}` : prefix || first.path;
  return new IronflowError(code, path ? `${path}: ${first.message}` : first.message, { path });
}

/** Parses with a zod schema, throwing the spec's error with the offending path. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, code: 'INVALID_INPUT' | 'INVALID_CONFIG' = 'INVALID_INPUT'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(result.error, code);
  return result.data;
}

export const notFound = (what: string, id: string): IronflowError => new IronflowError('NOT_FOUND', `${what} ${id} not found`, { id });
