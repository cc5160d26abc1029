// Activity failures as the workflow reads them: an IronflowError becomes an
// ApplicationFailure whose type is the error code (the plan's nonRetryableErrorTypes
// name codes), with the details, which never hold a credential. Retried as the one retry
// rule says (core/errors.ts `retryable`), unless the failure says it must never be.
import { ApplicationFailure } from '@temporalio/common';
import { isIronflowError, retryable } from '../../core/errors';

export function asActivityFailure(error: unknown): unknown {
  if (!isIronflowError(error)) return error;
  return ApplicationFailure.create({
    type: error.code,
    message: error.message,
    details: [error.details],
    nonRetryable: error.neverRetry || !retryable(error.code),
  });
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
