// A busy control plane answers late. A request safe to send twice (a read, or a write the
// control plane accepts again as it is) is sent again while the control plane does not answer,
// backing off, until the deadline (the step's own: services/step-deadline.ts). Each attempt
// waits twice as long for its answer as the one before (up to 30 s): a request given up on is
// still worked on by the control plane, so a short wait sent again and again only adds to the
// load that made it late. 1,000 machines enrolled at once kept the API's answers past the
// client's 5 s for minutes, and 23 machines failed on one unanswered BMC-ledger or BMC-access
// request.
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlPlaneUnreachable } from './control-plane-client';

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
const MAX_TIMEOUT_MS = 30_000;

export interface UntilAnswered {
  /** Epoch ms: no attempt starts or waits past it. */
  deadline: number;
  /** The first attempt's wait for an answer (the client's own timeout); each next one waits twice as long. */
  firstTimeoutMs: number;
  onRetry?: (event: { attempt: number; reason: string }) => void;
}

export async function untilAnswered<T>(call: (timeoutMs: number) => Promise<T>, { deadline, firstTimeoutMs, onRetry }: UntilAnswered): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const timeoutMs = Math.max(1, Math.min(MAX_TIMEOUT_MS, firstTimeoutMs * 2 ** (attempt - 1), deadline - Date.now()));
    try {
      return await call(timeoutMs);
    } catch (error) {
      if (!(error instanceof ControlPlaneUnreachable)) throw error;
      const delayMs = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1));
      if (Date.now() + delayMs >= deadline) throw error;
      onRetry?.({ attempt, reason: error.message });
      await sleep(delayMs);
    }
  }
}
