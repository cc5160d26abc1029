// Grants for the image cache: every cache URL the agent hands out is /cache/t/<grant>/<sha256>
// with an unguessable 128-bit grant. A boot grant (a ramdisk's if.cache, a sanboot URL) is
// bound to its boot entry: valid until the entry's notAfter and only while this agent holds
// the boot lease. A firmware grant serves one digest for two hours. The table is bounded:
// lapsed grants go first, then the oldest.
import { randomBytes } from 'node:crypto';

const FIRMWARE_GRANT_TTL_MS = 2 * 3_600_000;
export const MAX_GRANTS = 4096;
export const grantPattern = /^[0-9a-f]{32}$/;

type Grant = { kind: 'boot'; key: string; notAfter: number; sha256?: string } | { kind: 'firmware'; sha256: string; notAfter: number };

/** What a request under a grant gets: served, 404 (no such grant or digest), or 503 (not the active boot server). */
type GrantDecision = 'serve' | 'not-found' | 'not-active';

export class CacheGrants {
  private readonly grants = new Map<string, Grant>();
  /** Boot grants by entry, so every script for one entry carries the same URL. */
  private readonly bootGrantByKey = new Map<string, string>();

  constructor(private readonly maxGrants = MAX_GRANTS) {}

  /** The grant for a boot entry (a MAC under a workflow); `sha256` limits it to one image (sanboot). */
  bootGrant(entry: { mac: string; workflowId: string; notAfter: string }, sha256?: string, now = Date.now()): string {
    const key = `${entry.mac}\n${entry.workflowId}\n${entry.notAfter}\n${sha256 ?? ''}`;
    const existing = this.bootGrantByKey.get(key);
    if (existing && this.grants.has(existing)) return existing;
    return this.add({ kind: 'boot', key, notAfter: Date.parse(entry.notAfter), ...(sha256 ? { sha256 } : {}) }, now);
  }

  firmwareGrant(sha256: string, now = Date.now()): string {
    return this.add({ kind: 'firmware', sha256, notAfter: now + FIRMWARE_GRANT_TTL_MS }, now);
  }

  decide(grant: string, sha256: string, holdsLease: boolean, now = Date.now()): GrantDecision {
    const found = this.grants.get(grant);
    if (!found || now >= found.notAfter) return 'not-found';
    if (found.sha256 !== undefined && found.sha256 !== sha256) return 'not-found';
    if (found.kind === 'boot' && !holdsLease) return 'not-active';
    return 'serve';
  }

  size(): number {
    return this.grants.size;
  }

  private add(grant: Grant, now: number): string {
    if (this.grants.size >= this.maxGrants) this.prune(now);
    const id = randomBytes(16).toString('hex');
    this.grants.set(id, grant);
    if (grant.kind === 'boot') this.bootGrantByKey.set(grant.key, id);
    return id;
  }

  private prune(now: number): void {
    for (const [id, grant] of this.grants) if (now >= grant.notAfter) this.drop(id, grant);
    // Still full: the oldest (insertion order) goes.
    for (const [id, grant] of this.grants) {
      if (this.grants.size < this.maxGrants) break;
      this.drop(id, grant);
    }
  }

  private drop(id: string, grant: Grant): void {
    this.grants.delete(id);
    if (grant.kind === 'boot' && this.bootGrantByKey.get(grant.key) === id) this.bootGrantByKey.delete(grant.key);
  }
}
