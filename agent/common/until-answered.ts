// A busy control plane answers late. A request safe to send twice (a read, or a write the
// control plane accepts again as it is) is sent again while the control plane does not answer,
// backing off, until the deadline (the step's own: services/step-deadline.ts). 1,000 machines
// enrolled at once kept the API's answers past the client's 5 s for minutes, and 23 machines
// failed on one unanswered BMC-ledger or BMC-access request.
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlPlaneUnreachable } from './control-plane-client';

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

export async function untilAnswered<T>(call: () => Promise<T>, deadline: number, onRetry?: (event: { attempt: number; reason: string }) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ControlPlaneUnreachable)) throw error;
      const delayMs = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1));
      if (Date.now() + delayMs >= deadline) throw error;
      onRetry?.({ attempt, reason: error.message });
      await sleep(delayMs);
    }
  }
}
