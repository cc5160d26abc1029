// Refused gateway calls become security events, at most one per agent, method and reason
// every ten seconds: a misbehaving worker retries in a loop, and the log must stay readable.
import type { Db } from '../services/db';
import { recordRefusal, refusal } from '../services/joins/refusal';
import { ROOT_TENANT } from '../core/permissions';
import { RecentCache } from '../core/recent-cache';

const QUIET_MS = 10_000;
const MAX_TRACKED = 10_000;

interface GatewayRefusal {
  tenantId?: string;
  nodeId?: string;
  method: string;
  reason: string;
  message: string;
}

export class RefusalEvents {
  private readonly lastRecorded = new RecentCache<string, number>(MAX_TRACKED);

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  record(event: GatewayRefusal): void {
    const key = `${event.nodeId ?? '-'}\u0000${event.method}\u0000${event.reason}`;
    const last = this.lastRecorded.get(key);
    if (last !== undefined && this.now() - last < QUIET_MS) return;
    this.lastRecorded.set(key, this.now());
    const error = refusal('PERMISSION_DENIED', event.reason, event.message);
    void recordRefusal(this.db, 'security.gateway.refused', error, {
      tenantId: event.tenantId ?? ROOT_TENANT,
      subjectId: event.nodeId,
      data: { method: event.method },
    }).catch(() => undefined);
  }
}
