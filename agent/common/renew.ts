// Certificate renewal: before the control plane's renewAfter (a third of the lifetime
// before expiry), or earlier when `[certificate] renew_after` says so, the agent sends its
// current certificate and a new CSR by the same key to POST /v1/join/renew, and stores
// the new chain. Signed requests use the new certificate from then on.
import { buildCsr } from '../../services/pki/csr-builder';
import type { RenewInput } from '../../core/schemas/join';
import type { ControlPlaneClient } from './control-plane-client';
import { persistIdentity, type AgentIdentity } from './identity';
import type { AgentLog } from './log';

interface RenewAnswer {
  nodeId: string;
  certificateChain: string[];
  expiresAt: string;
}

export class CertificateRenewer {
  private running: Promise<boolean> | undefined;
  private readonly renewedListeners: Array<() => void> = [];
  renewals = 0;

  constructor(
    private readonly identity: AgentIdentity,
    private readonly client: ControlPlaneClient,
    private readonly config: { renewAfterMs?: number },
    private readonly log: AgentLog,
  ) {}

  /** Called after each renewal, once the new chain is stored (the worker reconnects with it). */
  onRenewed(listener: () => void): void {
    this.renewedListeners.push(listener);
  }

  /** When the current certificate is due for renewal (ms since the epoch). */
  dueAt(controlPlaneRenewAfter: string | undefined): number {
    const fromControlPlane = controlPlaneRenewAfter ? Date.parse(controlPlaneRenewAfter) : Date.parse(this.identity.current.expiresAt);
    const fromConfig = this.config.renewAfterMs !== undefined ? Date.parse(this.identity.current.issuedAt) + this.config.renewAfterMs : Infinity;
    return Math.min(fromControlPlane, fromConfig);
  }

  /** Renews when due (one renewal at a time); true when it renewed. */
  renewIfDue(controlPlaneRenewAfter: string | undefined, now = Date.now()): Promise<boolean> {
    if (now < this.dueAt(controlPlaneRenewAfter)) return Promise.resolve(false);
    this.running ??= this.renew().finally(() => (this.running = undefined));
    return this.running;
  }

  private async renew(): Promise<boolean> {
    const previous = this.identity.current;
    const issuedAt = new Date().toISOString();
    const body: RenewInput = { certificate: this.identity.certificatePem(), csr: await buildCsr(this.identity.key, 'ironflow-site-agent') };
    const answer = await this.client.post<RenewAnswer>('/v1/join/renew', body);
    this.identity.chain = answer.certificateChain;
    this.identity.current = { ...previous, issuedAt, expiresAt: answer.expiresAt };
    persistIdentity(this.identity);
    this.renewals += 1;
    this.log.info('certificate renewed', { nodeId: answer.nodeId, previousExpiresAt: previous.expiresAt, expiresAt: answer.expiresAt });
    for (const listener of this.renewedListeners) listener();
    return true;
  }
}
