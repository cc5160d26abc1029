// The calls each identity has open (a worker's long polls among them), so a revocation
// cuts them off within seconds instead of when the poll would have ended on its own.
export const MAX_CALLS_PER_IDENTITY = 32;

export interface OpenCall {
  /** Ends the call now, answering the agent with `message`. */
  cutOff(message: string): void;
}

interface Holder {
  certificateDer: Uint8Array;
  calls: Set<OpenCall>;
}

export class InFlightCalls {
  private readonly byFingerprint = new Map<string, Holder>();

  /** False when the identity already has its maximum of calls open. */
  open(fingerprint: string, certificateDer: Uint8Array, call: OpenCall): boolean {
    const holder = this.byFingerprint.get(fingerprint) ?? { certificateDer, calls: new Set<OpenCall>() };
    if (holder.calls.size >= MAX_CALLS_PER_IDENTITY) return false;
    holder.calls.add(call);
    this.byFingerprint.set(fingerprint, holder);
    return true;
  }

  close(fingerprint: string, call: OpenCall): void {
    const holder = this.byFingerprint.get(fingerprint);
    if (!holder) return;
    holder.calls.delete(call);
    if (holder.calls.size === 0) this.byFingerprint.delete(fingerprint);
  }

  holders(): Array<{ fingerprint: string; certificateDer: Uint8Array }> {
    return [...this.byFingerprint].map(([fingerprint, holder]) => ({ fingerprint, certificateDer: holder.certificateDer }));
  }

  cutOff(fingerprint: string, message: string): void {
    const holder = this.byFingerprint.get(fingerprint);
    if (!holder) return;
    this.byFingerprint.delete(fingerprint);
    for (const call of holder.calls) call.cutOff(message);
  }
}
