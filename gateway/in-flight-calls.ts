// The calls each identity has open (a worker's long polls among them), so a revocation
// cuts them off within seconds instead of when the poll would have ended on its own, and
// no identity holds more than its worker needs.

/**
 * Calls one identity may have open. A ramdisk or node agent runs at most 4 activities (each a
 * heartbeat and a completion at a time) beside its polls. A site agent's worker runs up to 100
 * BMC and boot commands at once, each heartbeating: at 32 its polls were refused whenever its
 * heartbeats were slow to answer, and 1,000 machines' commands waited in its queue past their
 * deadlines.
 */
export const callLimitFor = (role: string): number => (role === 'site' ? 256 : 32);

export interface OpenCall {
  /** Ends the call now, answering the agent with `message`. */
  cutOff(message: string): void;
}

export class InFlightCalls {
  private readonly byFingerprint = new Map<string, Set<OpenCall>>();

  /** False when the identity already has `limit` calls open. */
  open(fingerprint: string, call: OpenCall, limit: number): boolean {
    const calls = this.byFingerprint.get(fingerprint) ?? new Set<OpenCall>();
    if (calls.size >= limit) return false;
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
