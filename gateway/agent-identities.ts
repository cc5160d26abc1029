// Who is calling: the client certificate of the TLS session, checked like every agent
// credential (services/pki/authenticate-agent.ts: issued by the node CA, on record, unrevoked,
// unexpired, of a live node). A verdict is reused for a short while so a busy worker costs
// one database read per identity every few seconds, not one per call; refusals are kept
// longer so a revoked agent retrying in a loop does not flood the event log.
import { authenticateAgentCertificate, type AuthenticatedAgent } from '../services/pki/authenticate-agent';
import type { Db } from '../services/db';
import { IronflowError } from '../core/errors';
import { agentTaskQueue } from '../core/joins/certificate-policy';
import { fingerprintOf, type NodeCa } from '../services/pki/node-ca';
import { toPem } from '../core/pki/pem';
import { RecentCache } from '../core/recent-cache';

export const ACCEPTED_FOR_MS = 2_000;
const REFUSED_FOR_MS = 10_000;
const MAX_CACHED = 10_000;

export interface GatewayAgent extends AuthenticatedAgent {
  /** The one task queue this identity may poll. */
  taskQueue: string;
  /** What histories record as the worker identity, and what task tokens are bound to. */
  label: string;
}

type Verdict = { agent: GatewayAgent; until: number } | { error: IronflowError; until: number };

export class AgentIdentities {
  private readonly verdicts = new RecentCache<string, Verdict>(MAX_CACHED);

  constructor(
    private readonly db: Db,
    private readonly ca: NodeCa,
    private readonly now: () => number = Date.now,
  ) {}

  /** The agent behind a client certificate (DER), or an UNAUTHENTICATED IronflowError. */
  async check(certificateDer: Uint8Array): Promise<GatewayAgent> {
    const fingerprint = fingerprintOf(certificateDer);
    const cached = this.verdicts.get(fingerprint);
    if (cached && cached.until > this.now()) {
      if ('error' in cached) throw cached.error;
      if (cached.agent.notAfter.getTime() > this.now()) return cached.agent;
    }
    const verdict = await this.verify(certificateDer);
    this.verdicts.set(fingerprint, verdict);
    if ('error' in verdict) throw verdict.error;
    return verdict.agent;
  }

  /**
   * Of the identities holding calls open (by certificate fingerprint), those no longer valid,
   * with why: revoked, expired or of a deleted node. One query per 500, not one per identity,
   * so a fleet of idle long polls costs the database little. Their verdicts are dropped, so
   * their next call is refused and recorded as any refusal is.
   */
  async invalidAmong(fingerprints: string[]): Promise<Map<string, string>> {
    const invalid = new Map<string, string>();
    const now = this.now();
    const known: Array<{ fingerprint: string; agent: GatewayAgent }> = [];
    for (const fingerprint of fingerprints) {
      const verdict = this.verdicts.peek(fingerprint);
      if (!verdict) continue; // evicted: its next call is checked afresh
      if ('error' in verdict) invalid.set(fingerprint, verdict.error.message);
      else if (verdict.agent.notAfter.getTime() <= now)
        invalid.set(fingerprint, `certificate ${verdict.agent.serial} of node ${verdict.agent.nodeId} expired; join again with a new token`);
      else known.push({ fingerprint, agent: verdict.agent });
    }
    for (let i = 0; i < known.length; i += 500) {
      const chunk = known.slice(i, i + 500);
      const revoked = await this.db.nodeCertificate.findMany({
        where: { fingerprint: { in: chunk.map((k) => k.fingerprint) }, revokedAt: { not: null } },
        select: { fingerprint: true },
      });
      const deleted = await this.db.node.findMany({ where: { id: { in: chunk.map((k) => k.agent.nodeId) }, deletedAt: { not: null } }, select: { id: true } });
      const revokedSet = new Set(revoked.map((r) => r.fingerprint));
      const deletedSet = new Set(deleted.map((n) => n.id));
      for (const { fingerprint, agent } of chunk) {
        if (revokedSet.has(fingerprint))
          invalid.set(fingerprint, `certificate ${agent.serial} of node ${agent.nodeId} was revoked; join again with a new token`);
        else if (deletedSet.has(agent.nodeId)) invalid.set(fingerprint, `node ${agent.nodeId} no longer exists`);
      }
    }
    for (const fingerprint of invalid.keys()) this.verdicts.delete(fingerprint);
    return invalid;
  }

  private async verify(certificateDer: Uint8Array): Promise<Verdict> {
    try {
      const agent = await authenticateAgentCertificate(this.db, this.ca, toPem('CERTIFICATE', certificateDer), { purpose: 'gateway' });
      const taskQueue = agentTaskQueue(agent);
      return { agent: { ...agent, taskQueue, label: `${agent.role}:${agent.nodeId}` }, until: this.now() + ACCEPTED_FOR_MS };
    } catch (error) {
      if (error instanceof IronflowError) return { error, until: this.now() + REFUSED_FOR_MS };
      throw error;
    }
  }
}
