// The `confirmMac` signal and Update, as the node lifecycle and provision workflows take them
// (Temporal Web UI, `temporal workflow signal|update`, tctl runbooks): both run the
// metal.confirmMac activity, the REST route's code path, so all three doors check and store
// alike. The Update answers a refusal; a refused signal is handed to `rejected` (the status
// query lists it; the activity records it as an event). `macConfirmed` is the API's word that
// metal.confirmMac stored a MAC through another door: only a wake-up, since anyone reaching
// Temporal can send it. Its MAC is never used; the activity reads back what the control
// plane stored, and a forged signal for a node with no confirmed MAC is a rejected signal.
import { ApplicationFailure, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ConfirmMacActivityInput } from '../activities/metal-confirm-mac';
import { errorCodes } from '../core/errors';
import { malformedMacMessage, normalizeMac } from '../core/mac';
import { confirmMacSignal, confirmMacUpdate, macConfirmedSignal } from './provision-handles';

type ConfirmMacActivity = { 'metal.confirmMac'(input: ConfirmMacActivityInput): Promise<{ mac: string }> };

const { 'metal.confirmMac': confirmMacActivity } = proxyActivities<ConfirmMacActivity>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, maximumInterval: '5 seconds', nonRetryableErrorTypes: errorCodes.filter((code) => code !== 'INTERNAL') },
});

const failureOf = (err: unknown): { message: string; type: string } => {
  const cause = err instanceof Error && 'cause' in err && err.cause instanceof ApplicationFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { message: cause.message, type: cause.type ?? 'INTERNAL' };
  return { message: err instanceof Error ? err.message : String(err), type: 'INTERNAL' };
};

/** A status keeps the last refusals only: signals are anyone's who reaches Temporal, and as many as they like. */
export const MAX_REJECTED_SIGNALS = 20;

export function noteRejectedSignal(list: Array<{ name: string; reason: string }>, entry: { name: string; reason: string }): void {
  list.push(entry);
  if (list.length > MAX_REJECTED_SIGNALS) list.splice(0, list.length - MAX_REJECTED_SIGNALS);
}

export interface ConfirmMacHooks {
  confirmed(mac: string): void;
  rejected(reason: string): void;
}

export function installConfirmMacHandlers(nodeId: string, hooks: ConfirmMacHooks): void {
  setHandler(confirmMacSignal, async (mac) => {
    try {
      hooks.confirmed((await confirmMacActivity({ nodeId, mac, door: 'signal' })).mac);
    } catch (err) {
      const failure = failureOf(err);
      hooks.rejected(`${failure.type}: ${failure.message}`);
    }
  });
  setHandler(
    confirmMacUpdate,
    async (mac) => {
      try {
        const confirmed = (await confirmMacActivity({ nodeId, mac, door: 'update' })).mac;
        hooks.confirmed(confirmed);
        return confirmed;
      } catch (err) {
        const failure = failureOf(err);
        throw ApplicationFailure.nonRetryable(failure.message, failure.type);
      }
    },
    {
      // A malformed MAC is refused before it reaches the history.
      validator: (mac) => {
        if (typeof mac !== 'string' || !normalizeMac(mac)) throw ApplicationFailure.nonRetryable(malformedMacMessage(mac), 'INVALID_INPUT');
      },
    },
  );
  setHandler(macConfirmedSignal, async () => {
    try {
      hooks.confirmed((await confirmMacActivity({ nodeId, mac: null, door: 'wake' })).mac);
    } catch (err) {
      const failure = failureOf(err);
      hooks.rejected(`${failure.type}: ${failure.message}`);
    }
  });
}
