// Background pulls of the site section's cacheImages into the store, a few at a time. The
// section's status follows: PROGRESSING while images warm, FAILED naming an image that could
// not be cached (its bytes did not match, or its source failed), READY when all are cached.
// After every change the cache is trimmed to its budget, sparing what the site names.
import { IronflowError } from '../../core/errors';
import type { CacheImage } from '../../services/images/prewarm';
import type { CacheImageReport, SiteSectionStatus } from '../../core/schemas/agent-sessions';
import { openImageSource } from '../ramdisk/image-source';
import type { AgentLog } from '../common/log';
import { trimCache } from './eviction';
import { sha256Pattern, type ImageCacheStore } from './store';

/** The most a report lists: the heartbeat carries it (the schema bounds it the same). */
const MAX_REPORTED_IMAGES = 1024;
const MAX_MESSAGE_CHARS = 512;
const DEFAULT_CONCURRENCY = 2;
const DEFAULT_RETRY_FAILED_MS = 5 * 60_000;

/** A source URL without what may be a secret (user info, a presigned query): for logs and status. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

interface Failure {
  url: string;
  message: string;
  at: number;
}

export class CachePuller {
  private wanted = new Map<string, CacheImage>();
  private pinned = new Set<string>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, Failure>();
  private readonly concurrency: number;
  private readonly retryFailedMs: number;

  constructor(
    private readonly store: ImageCacheStore,
    private readonly log: AgentLog,
    private readonly options: { maxBytes?: number; concurrency?: number; retryFailedMs?: number; trustedCaPems?: readonly string[] } = {},
  ) {
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.retryFailedMs = options.retryFailedMs ?? DEFAULT_RETRY_FAILED_MS;
  }

  /** The site's current list (from each session answer) and the digests deploys pin there. */
  want(images: readonly CacheImage[], pinnedDigests: readonly string[] = []): void {
    this.wanted = new Map(images.filter((image) => sha256Pattern.test(image.sha256)).map((image) => [image.sha256, image]));
    this.pinned = new Set(pinnedDigests);
    for (const sha256 of this.failures.keys()) if (!this.wanted.has(sha256)) this.failures.delete(sha256);
    this.trim();
    this.startPulls();
  }

  /** Whether the site's current list names this digest in this format. */
  names(sha256: string, format: string): boolean {
    return this.wanted.get(sha256)?.format === format;
  }

  /** The digests eviction spares. */
  protectedDigests(): Set<string> {
    return new Set([...this.wanted.keys(), ...this.pinned]);
  }

  status(): SiteSectionStatus {
    const [failed] = [...this.failures.entries()];
    if (failed) {
      const [sha256, failure] = failed;
      return {
        state: 'FAILED',
        message: `image ${displayUrl(failure.url)} (sha256 ${sha256}) could not be cached: ${failure.message}`.slice(0, MAX_MESSAGE_CHARS),
      };
    }
    const missing = [...this.wanted.keys()].filter((sha256) => !this.store.has(sha256));
    if (missing.length) return { state: 'PROGRESSING', message: `${missing.length} of ${this.wanted.size} images warming` };
    return { state: 'READY', message: `${this.wanted.size} images cached` };
  }

  /** The images inventory: every verified copy, every pull under way, every failed pull. */
  report(): CacheImageReport[] {
    const out: CacheImageReport[] = this.store.list().map((copy) => ({ sha256: copy.sha256, state: 'ready', sizeBytes: copy.sizeBytes }));
    for (const sha256 of this.inFlight.keys()) out.push({ sha256, state: 'pulling', sizeBytes: 0 });
    for (const sha256 of this.failures.keys()) out.push({ sha256, state: 'failed', sizeBytes: 0 });
    return out.sort((a, b) => a.sha256.localeCompare(b.sha256)).slice(0, MAX_REPORTED_IMAGES);
  }

  /** Resolves once no pull is under way (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight.values()]);
  }

  private startPulls(): void {
    const now = Date.now();
    for (const image of this.wanted.values()) {
      if (this.inFlight.size >= this.concurrency) return;
      if (this.store.has(image.sha256) || this.inFlight.has(image.sha256)) continue;
      const failure = this.failures.get(image.sha256);
      if (failure && failure.url === image.url && now - failure.at < this.retryFailedMs) continue;
      const pull = this.pull(image).finally(() => {
        this.inFlight.delete(image.sha256);
        this.trim();
        this.startPulls();
      });
      this.inFlight.set(image.sha256, pull);
    }
  }

  private async pull(image: CacheImage): Promise<void> {
    this.log.info('image cache: pulling', { url: displayUrl(image.url), sha256: image.sha256 });
    try {
      const source = await openImageSource(image.url, this.options.trustedCaPems);
      const copy = await this.store.ingest(image.sha256, source, this.options.maxBytes);
      this.failures.delete(image.sha256);
      this.log.info('image cache: cached a verified copy', { url: displayUrl(image.url), sha256: image.sha256, sizeBytes: copy.sizeBytes });
    } catch (error) {
      const message = error instanceof IronflowError || error instanceof Error ? error.message : String(error);
      this.failures.set(image.sha256, { url: image.url, message, at: Date.now() });
      this.log.warn('image cache: pull failed', { url: displayUrl(image.url), sha256: image.sha256, error: message });
    }
  }

  private trim(): void {
    for (const copy of trimCache(this.store, this.options.maxBytes, this.protectedDigests())) {
      this.log.info('image cache: evicted (least recently used)', { sha256: copy.sha256, sizeBytes: copy.sizeBytes });
    }
  }
}
