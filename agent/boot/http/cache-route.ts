// GET/HEAD /cache/t/<grant>/<sha256>: the image cache, served only under a live grant
// (agent/cache/grants.ts). Any other path under /cache/ — /cache/ itself, a malformed grant
// or digest, an unknown or lapsed grant, a digest not cached — is a 404; a boot grant while
// this agent does not hold the boot lease is a 503, as is a transfer past MAX_CACHE_TRANSFERS
// at once. One byte range per request (iPXE's sanboot and resumed streams); several ranges
// are answered whole.
import { createReadStream } from 'node:fs';
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { CacheGrants } from '../../cache/grants';
import { grantPattern } from '../../cache/grants';
import { sha256Pattern, type ImageCacheStore } from '../../cache/store';
import type { AgentLog } from '../../site/log';
import { sendText, type BootHttpRoute } from './server';

export const CACHE_PATH_PREFIX = '/cache/';
const GRANT_PREFIX = '/cache/t/';
/** Transfers at once: past it a granted request is told to come back (503), not queued. */
export const MAX_CACHE_TRANSFERS = 256;

export interface CacheRouteDeps {
  store: ImageCacheStore;
  grants: CacheGrants;
  /** Holds the boot lease at a non-zero epoch (boot grants serve only then). */
  holdsLease: () => boolean;
  log: AgentLog;
  /** Transfers at once (default MAX_CACHE_TRANSFERS). */
  maxTransfers?: number;
}

/** The grant URL path for a digest. */
export function cachePath(grant: string, sha256: string): string {
  return `${GRANT_PREFIX}${grant}/${sha256}`;
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` against `size`: the inclusive range, 'unsatisfiable', or undefined (serve whole). */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match) return undefined;
  const [, first, last] = match as unknown as [string, string, string];
  if (first === '' && last === '') return undefined;
  let start: number;
  let end: number;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(first);
    end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

export function cacheRoute(deps: CacheRouteDeps): BootHttpRoute {
  const notFound = (res: http.ServerResponse) => sendText(res, 404, 'not found\n');
  const maxTransfers = deps.maxTransfers ?? MAX_CACHE_TRANSFERS;
  let transfers = 0;
  return {
    path: CACHE_PATH_PREFIX,
    async handle(req, res, url) {
      const rest = url.pathname.startsWith(GRANT_PREFIX) ? url.pathname.slice(GRANT_PREFIX.length).split('/') : [];
      const [grant, sha256] = rest;
      if (rest.length !== 2 || !grant || !sha256 || !grantPattern.test(grant) || !sha256Pattern.test(sha256)) return notFound(res);
      const decision = deps.grants.decide(grant, sha256, deps.holdsLease());
      if (decision === 'not-active') return sendText(res, 503, 'this boot server is not active\n', { 'retry-after': '10' });
      const file = decision === 'serve' ? deps.store.pathOf(sha256) : undefined;
      const copy = deps.store.get(sha256);
      if (!file || !copy) return notFound(res);

      const range = parseRange(req.headers.range, copy.sizeBytes);
      const headers = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', etag: `"${sha256}"`, 'cache-control': 'no-store' };
      if (range === 'unsatisfiable') return sendText(res, 416, '', { 'content-range': `bytes */${copy.sizeBytes}` });
      if (transfers >= maxTransfers) return sendText(res, 503, 'too many transfers; retry\n', { 'retry-after': '5' });
      deps.store.touch(sha256);
      const { start, end } = range ?? { start: 0, end: copy.sizeBytes - 1 };
      const length = copy.sizeBytes === 0 ? 0 : end - start + 1;
      res.writeHead(range ? 206 : 200, { ...headers, 'content-length': length, ...(range ? { 'content-range': `bytes ${start}-${end}/${copy.sizeBytes}` } : {}) });
      if (req.method === 'HEAD' || length === 0) return void res.end();
      transfers += 1;
      try {
        await pipeline(createReadStream(file, { start, end }), res);
      } catch (error) {
        // The machine hung up (or the copy was evicted mid-read): nothing more to send.
        deps.log.info('image cache: a transfer ended early', { sha256, error: (error as Error).message });
        res.destroy();
      } finally {
        transfers -= 1;
      }
    },
  };
}
