// Refusals are rate-limited per source address (brute force, event-log flooding), in two
// groups with a bucket each (core/refusal-buckets.ts):
// - the routes anyone can call (join, agents): each answer an unauthenticated caller earns
//   (400 bad input, 401 not authenticated) spends a token;
// - every credentialed route, the console's sign-in included: each 401 for a credential that
//   was presented (a guessed, malformed, revoked or expired bearer) spends a token. A request
//   with no credential at all guesses nothing and spends nothing.
// A source with no token left in a group is answered 429 RATE_LIMITED with a retry-after
// before its request is parsed, authenticated or logged as an event — a right guess too, so
// the answer tells a guesser nothing. Good requests, and the answers authenticated callers
// get in the course of their work (403, 404, 409 on the BMC ledger), spend nothing, so agents
// sharing a site's address never limit one another, nor operators behind one NAT.
// In-process buckets: with several API processes a source gets each process's allowance,
// a bound still (the point is to stop brute force and flooding, not to meter).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IronflowError } from '../core/errors';
import { RefusalBuckets, type RefusalLimits } from '../core/refusal-buckets';
import { isUnauthenticatedRoute } from './body-limits';

/**
 * 50 at once (an agent with a stale certificate or a bad clock retries a few times), then
 * one a second: an agent that keeps failing retries about once a second
 * (agent/site/session.ts), so it never runs its address dry for the agents sharing it; a join
 * token or credential secret (128 random bits or more) guessed once a second gets nowhere.
 */
export const REFUSAL_LIMITS: RefusalLimits = { burst: 50, perSecond: 1 };

type Group = 'anonymous' | 'credential';

/** The console's sign-in takes the credential in its form, not a header. */
const CONSOLE_SIGN_IN = '/console/sign-in';

/** Routes never limited: liveness and the API's documentation answer everyone. */
const unlimitedPrefixes = ['/healthz', '/docs'];

function groupOf(routeUrl: string | undefined): Group | null {
  if (routeUrl === undefined || unlimitedPrefixes.some((p) => routeUrl === p || routeUrl.startsWith(`${p}/`))) return null;
  return isUnauthenticatedRoute(routeUrl) ? 'anonymous' : 'credential';
}

/** Whether the answer is a refusal that spends a token of the group's bucket. */
function spends(group: Group, request: FastifyRequest, status: number): boolean {
  if (group === 'anonymous') return status === 400 || status === 401;
  return status === 401 && (request.headers.authorization !== undefined || request.routeOptions.url === CONSOLE_SIGN_IN);
}

/** Registers the limit on the root instance, before any other request hook. */
export function registerRefusalRateLimit(app: FastifyInstance): void {
  const buckets: Record<Group, RefusalBuckets> = { anonymous: new RefusalBuckets(REFUSAL_LIMITS), credential: new RefusalBuckets(REFUSAL_LIMITS) };

  app.addHook('onRequest', async (request, reply) => {
    const group = groupOf(request.routeOptions.url);
    if (!group) return;
    const retryAfter = buckets[group].retryAfterSeconds(request.ip);
    if (retryAfter > 0) {
      reply.header('retry-after', String(retryAfter));
      throw new IronflowError('RATE_LIMITED', `too many refused requests from ${request.ip}; retry after ${retryAfter} s`, {
        reason: 'rate-limited',
        retryAfterSeconds: retryAfter,
      });
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const group = groupOf(request.routeOptions.url);
    if (group && spends(group, request, reply.statusCode)) buckets[group].spend(request.ip);
  });
}
