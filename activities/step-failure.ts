// Step activities fail with the spec's code as the failure type, so the provision workflow
// (and the lifecycle's lastError) see INVALID_STATE, DRIVER_ERROR … and only what the one
// retry rule (core/errors.ts `retryable`) calls passing is retried, unless the failure says
// it must never be.
import { ApplicationFailure } from '@temporalio/common';
import { isIronflowError, retryable } from '../core/errors';

export function stepFailure(err: unknown): unknown {
  if (!isIronflowError(err)) return err;
  return ApplicationFailure.create({ message: err.message, type: err.code, nonRetryable: err.neverRetry || !retryable(err.code), details: [err.details] });
}

/** Runs a step body, turning an IronflowError into its ApplicationFailure. */
export async function asStep<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw stepFailure(err);
  }
}
