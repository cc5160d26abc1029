// Activity failures as the workflow reads them: an IronflowError becomes an
// ApplicationFailure whose type is the error code (the plan's nonRetryableErrorTypes
// name codes), with the details, which never hold a credential.
import { ApplicationFailure } from '@temporalio/common';
import { isIronflowError } from '../../core/errors';

const neverRetried = new Set(['INVALID_INPUT', 'INVALID_CONFIG', 'UNSUPPORTED', 'NOT_FOUND', 'PERMISSION_DENIED']);

export function asActivityFailure(error: unknown): unknown {
  if (!isIronflowError(error)) return error;
  return ApplicationFailure.create({ type: error.code, message: error.message, details: [error.details], nonRetryable: neverRetried.has(error.code) });
}

export function reportingFailures<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (error) {
      throw asActivityFailure(error);
    }
  };
}
