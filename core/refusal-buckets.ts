// Per-source refusal buckets: each refusal a source earns spends a token, tokens refill at a
// steady rate up to a burst, and a source with none left is limited until one refills. The
// API (api/rate-limit.ts) and the boot server (agent/boot/http/server.ts) both answer such a
// source 429 before doing any work for it. Bounded memory: at most `maxSources` tracked,
// the least recently seen forgotten first (its bucket had refilled most).
import { RecentCache } from './recent-cache';

export interface RefusalLimits {
  /** Refusals a source may collect at once. */
  burst: number;
  /** Sustained refusals allowed per second. */
  perSecond: number;
  /** Sources tracked at once (default 10,000). */
  maxSources?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RefusalBuckets {
  private readonly buckets: RecentCache<string, Bucket>;

  constructor(private readonly limits: RefusalLimits) {
    this.buckets = new RecentCache(limits.maxSources ?? 10_000);
  }

  private refilled(source: string, now: number): Bucket | undefined {
    const bucket = this.buckets.get(source);
    if (!bucket) return undefined;
    bucket.tokens = Math.min(this.limits.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.limits.perSecond);
    bucket.updatedAt = now;
    if (bucket.tokens >= this.limits.burst) {
      this.buckets.delete(source);
      return undefined;
    }
    return bucket;
  }

  /** Seconds until the source may be refused again, or 0 when it is not limited. */
  retryAfterSeconds(source: string, now = Date.now()): number {
    const bucket = this.refilled(source, now);
    return bucket && bucket.tokens < 1 ? Math.ceil((1 - bucket.tokens) / this.limits.perSecond) : 0;
  }

  spend(source: string, now = Date.now()): void {
    const bucket = this.refilled(source, now) ?? { tokens: this.limits.burst, updatedAt: now };
    bucket.tokens = Math.max(0, bucket.tokens - 1);
    this.buckets.set(source, bucket);
  }
}
