// BMC operations run once. A step names each BMC command by an operation id; the ledger
// remembers what was sent, so a retried (or re-routed) step reuses the outcome instead of
// power-cycling a machine twice. The site's agents share one, kept by the control plane
// (agent/site/remote-operation-ledger.ts), so a re-routed step sees what another agent sent.
import { IronflowError, isIronflowError } from '../../core/errors';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface OperationRecord {
  operationId: string;
  /** What was sent, e.g. `power.set(cycle)`. */
  kind: string;
  /** Which BMC, e.g. `redfish:https://10.0.0.5/1` (no credentials). */
  bmc: string;
  /** started: sent or about to be, outcome not recorded (the agent may have died). */
  state: 'started' | 'succeeded' | 'failed';
  result?: JsonValue;
  error?: { code: string; message: string; outcomeUnknown: boolean };
  startedAt: string;
  finishedAt?: string;
}

export type StartedRecord = OperationRecord & { state: 'started' };

export interface OperationLedger {
  get(operationId: string): Promise<OperationRecord | null>;
  put(record: OperationRecord): Promise<void>;
  /**
   * Records `started` when the ledger holds nothing under the id, and answers null; else writes
   * nothing and answers what it holds. One round trip for a command's first send, which is
   * nearly every send: a read first, then the write, would be two.
   */
  begin(record: StartedRecord): Promise<OperationRecord | null>;
}

interface OperationSpec {
  operationId: string;
  kind: string;
  bmc: string;
  /**
   * Whether sending again is harmless (set boot device, power on). A non-idempotent
   * operation (cycle, reset) whose outcome is unknown is never sent again.
   */
  idempotent: boolean;
}

export type OperationOutcome<T> =
  | { reused: false; result: T }
  | { reused: true; result: T; interrupted: false }
  /** Sent before, outcome unknown, and not safe to send again. */
  | { reused: true; result: null; interrupted: true };

const operationIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,255}$/;

/** In-process: a second caller with the same id waits for the first instead of sending. */
const inFlight = new Map<string, Promise<unknown>>();

export async function runOperationOnce<T extends JsonValue>(
  ledger: OperationLedger,
  spec: OperationSpec,
  send: () => Promise<T>,
): Promise<OperationOutcome<T>> {
  if (!operationIdPattern.test(spec.operationId)) {
    throw new IronflowError(
      'INVALID_INPUT',
      `operation id ${JSON.stringify(spec.operationId.slice(0, 64))} must be 1-256 characters of letters, digits and ._:@/-`,
      {
        path: 'operationId',
      },
    );
  }
  const pending = inFlight.get(spec.operationId);
  if (pending) {
    await pending.catch(() => undefined);
    return runOperationOnce(ledger, spec, send);
  }
  const run = decideAndSend(ledger, spec, send);
  inFlight.set(spec.operationId, run);
  try {
    return await run;
  } finally {
    inFlight.delete(spec.operationId);
  }
}

async function decideAndSend<T extends JsonValue>(ledger: OperationLedger, spec: OperationSpec, send: () => Promise<T>): Promise<OperationOutcome<T>> {
  const startedAt = new Date().toISOString();
  const started: StartedRecord = { operationId: spec.operationId, kind: spec.kind, bmc: spec.bmc, state: 'started', startedAt };
  const existing = await ledger.begin(started);
  if (existing) {
    if (existing.kind !== spec.kind || existing.bmc !== spec.bmc) {
      throw new IronflowError(
        'CONFLICT',
        `operation ${spec.operationId} was ${existing.kind} on ${existing.bmc}, not ${spec.kind} on ${spec.bmc}; use a new operation id`,
        {
          operationId: spec.operationId,
        },
      );
    }
    if (existing.state === 'succeeded') return { reused: true, result: (existing.result ?? null) as T, interrupted: false };
    const unknown = existing.state === 'started' || existing.error?.outcomeUnknown === true;
    if (unknown && !spec.idempotent) return { reused: true, result: null, interrupted: true };
    // A definite failure, or an idempotent operation: sending again is the right thing.
    await ledger.put(started);
  }
  try {
    const result = await send();
    await ledger.put({ ...started, state: 'succeeded', result, finishedAt: new Date().toISOString() });
    return { reused: false, result };
  } catch (error) {
    const code = isIronflowError(error) ? error.code : 'INTERNAL';
    const message = error instanceof Error ? error.message : String(error);
    const outcomeUnknown = isIronflowError(error) && error.details.outcomeUnknown === true;
    await ledger.put({ ...started, state: 'failed', error: { code, message, outcomeUnknown }, finishedAt: new Date().toISOString() });
    throw error;
  }
}
