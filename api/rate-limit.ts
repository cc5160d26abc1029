// Refusals are rate-limited per source address on the routes anyone can call (join, agents):
// each answer an unauthenticated caller earns (400 bad input, 401 not authenticated) spends a
// token of the source's bucket, and a source with none left is answered 429 RATE_LIMITED
// before its request is parsed, authenticated or logged as an event. Good requests, and the
// answers authenticated agents get in the course of their work (403, 404, 409 on the BMC
// ledger), spend nothing, so agents sharing a site's address never limit one another.
// In-process buckets: with several API processes a source gets each process's allowance,
// a bound still (the point is to stop brute force and event-log flooding, not to meter).
import type { FastifyInstance } from 'fastify';
import { IronflowError } from '../core/errors';
import { isUnauthenticatedRoute } from './body-limits';

/** Refusals a source may collect at once: an agent with a stale certificate or a bad clock retries a few times. */
const REFUSAL_BURST = 50;
/**
 * Sustained refusals allowed: one a second. An agent that keeps failing retries about once a
 * second (agent/site/session.ts), so it never runs its address dry for the agents sharing it;
 * a join token (128 random bits) guessed once a second gets nowhere.
 */
const REFUSALS_PER_SECOND = 1;
/** What anonymous probing earns: malformed input and failed authentication. */
const SPENDING_STATUSES = new Set([400, 401]);
/** Sources tracked at once; the least recently refused is forgotten first (its bucket had refilled most). */
const MAX_TRACKED_SOURCES = 10_000;

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RefusalBuckets {
  private readonly buckets = new Map<string, Bucket>();

  private refilled(source: string, now: number): Bucket | undefined {
    const bucket = this.buckets.get(source);
    if (!bucket) return undefined;
    bucket.tokens = Math.min(REFUSAL_BURST, bucket.tokens + ((now - bucket.updatedAt) / 1000) * REFUSALS_PER_SECOND);
    bucket.updatedAt = now;
    if (bucket.tokens >= REFUSAL_BURST) {
      this.buckets.delete(source);
      return undefined;
    }
    return bucket;
  }

  /** Seconds until the source may be refused again, or 0 when it is not limited. */
  retryAfterSeconds(source: string, now = Date.now()): number {
    const bucket = this.refilled(source, now);
    return bucket && bucket.tokens < 1 ? Math.ceil((1 - bucket.tokens) / REFUSALS_PER_SECOND) : 0;
  }

  spend(source: string, now = Date.now()): void {
    const bucket = this.refilled(source, now) ?? { tokens: REFUSAL_BURST, updatedAt: now };
    bucket.tokens = Math.max(0, bucket.tokens - 1);
    this.buckets.delete(source); // re-inserted last: the map's order is least recently refused first
    this.buckets.set(source, bucket);
    if (this.buckets.size > MAX_TRACKED_SOURCES) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
  }
}

/** Registers the limit on the root instance, before any other request hook. */
export function registerRefusalRateLimit(app: FastifyInstance, buckets = new RefusalBuckets()): void {
  const limited = (routeUrl: string | undefined) => routeUrl !== undefined && isUnauthenticatedRoute(routeUrl);

  app.addHook('onRequest', async (request, reply) => {
    if (!limited(request.routeOptions.url)) return;
    const retryAfter = buckets.retryAfterSeconds(request.ip);
    if (retryAfter > 0) {
      reply.header('retry-after', String(retryAfter));
      throw new IronflowError('RATE_LIMITED', `too many refused requests from ${request.ip}; retry after ${retryAfter} s`, { reason: 'rate-limited', retryAfterSeconds: retryAfter });
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    if (limited(request.routeOptions.url) && SPENDING_STATUSES.has(reply.statusCode)) buckets.spend(request.ip);
  });
}
