// Refusing a join or an agent's authentication: the spec's code, a reason a machine can
// read (details.reason), a message that names the fix, and a security event. The event
// carries ids and the reason only, never a token or a key.
import type { DbOrTx } from '../db';
import { IronflowError, isIronflowError, type ErrorCode } from '../../core/errors';
import { boundValue, EVENT_BOUNDS, type EventBounds } from '../../core/event-bounds';
import { appendEvent } from '../events';
import { ROOT_TENANT } from '../../core/permissions';

/** Tighter than other events': a refusal's context is what an unauthenticated caller sent. */
const REFUSAL_BOUNDS: EventBounds = { ...EVENT_BOUNDS, maxString: 256, maxItems: 32, maxDepth: 4 };

export function refusal(code: ErrorCode, reason: string, message: string, details: Record<string, unknown> = {}): IronflowError {
  return new IronflowError(code, message, { ...details, reason });
}

export interface RefusalContext {
  /** The tenant whose object was involved, when known (else the event goes to root). */
  tenantId?: string;
  subjectId?: string;
  data?: Record<string, unknown>;
}

/** Records `error` as the security event `type` when it is one of ours, then rethrows it. */
export async function recordRefusal(db: DbOrTx, type: string, error: unknown, context: RefusalContext): Promise<never> {
  if (isIronflowError(error)) {
    await appendEvent(db, {
      tenantId: context.tenantId ?? ROOT_TENANT,
      type,
      subjectId: context.subjectId,
      data: boundValue(
        {
          ...context.data,
          code: error.code,
          reason: typeof error.details.reason === 'string' ? error.details.reason : error.code.toLowerCase().replace(/_/g, '-'),
        },
        REFUSAL_BOUNDS,
      ) as Record<string, unknown>,
    }).catch(() => undefined); // a failed audit write must not mask the refusal itself
  }
  throw error;
}
