// The agent's session with the control plane: a signed heartbeat every heartbeatIntervalMs,
// whose answers carry the boot lease and the site spec. The agent FENCES ITSELF: it counts
// as active only while the lease names it at a non-zero epoch, and it has heard from the
// control plane within the lease TTL, and the lease it was told of has not run out. So a
// partitioned holder stops serving before (never after) a standby can be promoted.
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { HEARTBEAT_ANSWER_WAIT_MS } from '../../core/agent-queues';
import { BOOT_LEASE_TTL_MS } from '../../core/boot-lease/decide';
import type { CacheImageReport, SessionAnswer, SiteSectionStatus } from '../../core/schemas/agent-sessions';
import type { DiscoveryEntry } from '../../core/schemas/discovery';
import { ControlPlaneUnreachable, type ControlPlaneClient } from '../common/control-plane-client';
import type { AgentIdentity } from '../common/identity';
import type { AgentLog } from '../common/log';
import type { CertificateRenewer } from '../common/renew';
import { ReportThrottle } from './report-throttle';

export interface SessionState {
  /** Heard from the control plane within the TTL. */
  connected: boolean;
  /** This agent is the site's boot server right now (see the file comment). */
  active: boolean;
  epoch: number;
  holderNodeId: string | null;
  /** When the last answer arrived (wall clock, ISO); null before the first. */
  lastHeardAt: string | null;
  cacheImages: NonNullable<SessionAnswer['site']>['cacheImages'];
  /** Digests deploys at the site stream: never evicted from the cache. */
  pinnedImages: string[];
}

interface SessionEvents {
  change: [SessionState];
  /** Every answer from the control plane (the site spec may have changed). */
  answer: [SessionState];
}

/** What the heartbeat reports of the agent's image cache (agent/cache). */
type CacheReporter = () => { images: CacheImageReport[]; status: SiteSectionStatus };

/** The boot server's discovered list (agent/boot/discovered.ts): reported whole, and a new MAC asks for a report. */
interface DiscoveredReporter {
  report(): DiscoveryEntry[];
  on(event: 'added', listener: () => void): unknown;
}

const DEFAULT_INTERVAL_MS = 5_000;
/** A new machine asks for an early report at most this often (spec 001), not on every packet. */
export const DISCOVERED_REPORT_EVERY_MS = 30_000;
const EVALUATE_MS = 250;

export class SiteSession extends EventEmitter<SessionEvents> {
  private answer: SessionAnswer | undefined;
  /** performance.now() when the last answer's request was sent (monotonic). */
  private heardAt: number | undefined;
  /** Monotonic time when the told lease runs out, by the wall clock at that answer. */
  private leaseEndsAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private evaluator: NodeJS.Timeout | undefined;
  private lastReported: SessionState | undefined;
  private failing = false;
  private stopped = true;
  private beating: Promise<void> = Promise.resolve();
  private cacheReporter: CacheReporter | undefined;
  private discoveredReporter: DiscoveredReporter | undefined;
  private inFlight = false;
  private earlyReportAsked = false;
  private readonly earlyReports = new ReportThrottle(DISCOVERED_REPORT_EVERY_MS);

  constructor(
    private readonly identity: AgentIdentity,
    private readonly client: ControlPlaneClient,
    private readonly renewer: CertificateRenewer,
    private readonly log: AgentLog,
    private readonly ttlMs = BOOT_LEASE_TTL_MS,
  ) {
    super();
  }

  /** From now on each heartbeat carries the cache's images report and the site section's status. */
  reportCacheWith(reporter: CacheReporter): void {
    this.cacheReporter = reporter;
  }

  /** From now on each heartbeat carries the discovered list, and a new machine reports early (at most every 30 s). */
  reportDiscoveredWith(reporter: DiscoveredReporter): void {
    this.discoveredReporter = reporter;
    reporter.on('added', () => this.reportEarly());
  }

  start(): void {
    this.stopped = false;
    this.beating = this.beat();
    this.evaluator = setInterval(() => this.report(), EVALUATE_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.evaluator);
    await this.beating;
    this.report();
  }

  state(): SessionState {
    const now = performance.now();
    const connected = this.heardAt !== undefined && now - this.heardAt < this.ttlMs;
    const lease = this.answer?.site?.bootLease;
    const leaseLive = this.leaseEndsAt !== undefined && now < this.leaseEndsAt;
    return {
      connected,
      active: connected && leaseLive && lease?.active === true && lease.epoch > 0,
      epoch: lease?.epoch ?? 0,
      holderNodeId: lease?.holderNodeId ?? null,
      lastHeardAt: this.answer && this.heardAt !== undefined ? new Date(Date.now() - (now - this.heardAt)).toISOString() : null,
      cacheImages: this.answer?.site?.cacheImages ?? [],
      pinnedImages: this.answer?.site?.pinnedImages ?? [],
    };
  }

  /** Resolves with the first answer (or rejects when the control plane refuses the agent). */
  async firstAnswer(timeoutMs = 30_000): Promise<SessionAnswer> {
    const deadline = Date.now() + timeoutMs;
    while (!this.answer) {
      if (Date.now() > deadline) throw new ControlPlaneUnreachable(`no session answer within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.answer;
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    this.inFlight = true;
    const sentAt = performance.now();
    const wallAtSend = Date.now();
    try {
      const cache = this.cacheReporter?.();
      const discovered = this.discoveredReporter?.report();
      const body = {
        agentVersion: 'ironflow-site/0.1',
        ...(cache ? { images: cache.images, siteStatus: cache.status } : {}),
        ...(discovered ? { discovered } : {}),
      };
      const answer = await this.client.signedPost<SessionAnswer>(this.identity, '/v1/agents/session', body, HEARTBEAT_ANSWER_WAIT_MS);
      this.answer = answer;
      // Measured from when the request left: the control plane's view is at least that old.
      this.heardAt = sentAt;
      const expiresAt = answer.site?.bootLease.expiresAt ? Date.parse(answer.site.bootLease.expiresAt) : undefined;
      this.leaseEndsAt = expiresAt === undefined ? undefined : sentAt + (expiresAt - wallAtSend);
      if (this.failing) this.log.info('control plane answers again', { nodeId: answer.nodeId });
      this.failing = false;
      this.report();
      this.emit('answer', this.state());
      await this.renewer.renewIfDue(answer.certificate.renewAfter).catch((error: unknown) => {
        this.log.warn('certificate renewal failed; retrying with the next heartbeat', { error: (error as Error).message });
      });
    } catch (error) {
      if (!this.failing) this.log.warn('heartbeat failed', { error: (error as Error).message });
      this.failing = true;
    }
    this.inFlight = false;
    if (this.stopped) return;
    const interval = this.answer?.heartbeatIntervalMs ?? DEFAULT_INTERVAL_MS;
    const wait = this.earlyReportAsked ? 0 : this.failing ? Math.min(1_000, interval) : interval;
    this.earlyReportAsked = false;
    this.timer = setTimeout(() => {
      this.beating = this.beat();
    }, wait);
  }

  /** The next heartbeat now instead of at its interval (right after one in flight), at most once every 30 s. */
  private reportEarly(): void {
    if (this.stopped || !this.earlyReports.take()) return;
    if (this.inFlight) {
      this.earlyReportAsked = true;
      return;
    }
    clearTimeout(this.timer);
    this.beating = this.beat();
  }

  /** Emits `change` when connected, active or the epoch changed, and logs fencing. */
  private report(): void {
    const state = this.state();
    const last = this.lastReported;
    if (last && last.connected === state.connected && last.active === state.active && last.epoch === state.epoch && last.holderNodeId === state.holderNodeId)
      return;
    this.lastReported = state;
    if (last?.active && !state.active) {
      const leaseRanOut = this.leaseEndsAt !== undefined && performance.now() >= this.leaseEndsAt;
      const why = !state.connected
        ? `fenced: no answer from the control plane within ${this.ttlMs} ms`
        : leaseRanOut
          ? 'fenced: the boot lease ran out without a renewal'
          : 'boot lease lost: standing by';
      this.log.warn(why, { epoch: state.epoch });
    } else if (state.active && !last?.active) {
      this.log.info('holding the boot lease: active boot server', { epoch: state.epoch });
    }
    this.emit('change', state);
  }
}
