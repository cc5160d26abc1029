// The calls each identity has open (a worker's long polls among them), so a revocation
// cuts them off within seconds instead of when the poll would have ended on its own.
const MAX_CALLS_PER_IDENTITY = 32;

export interface OpenCall {
  /** Ends the call now, answering the agent with `message`. */
  cutOff(message: string): void;
}

export class InFlightCalls {
  private readonly byFingerprint = new Map<string, Set<OpenCall>>();

  /** False when the identity already has its maximum of calls open. */
  open(fingerprint: string, call: OpenCall): boolean {
    const calls = this.byFingerprint.get(fingerprint) ?? new Set<OpenCall>();
    if (calls.size >= MAX_CALLS_PER_IDENTITY) return false;
    calls.add(call);
    this.byFingerprint.set(fingerprint, calls);
    return true;
  }

  close(fingerprint: string, call: OpenCall): void {
    const calls = this.byFingerprint.get(fingerprint);
    if (!calls) return;
    calls.delete(call);
    if (calls.size === 0) this.byFingerprint.delete(fingerprint);
  }

  fingerprints(): string[] {
    return [...this.byFingerprint.keys()];
  }

  cutOff(fingerprint: string, message: string): void {
    const calls = this.byFingerprint.get(fingerprint);
    if (!calls) return;
    this.byFingerprint.delete(fingerprint);
    for (const call of calls) call.cutOff(message);
  }
}
