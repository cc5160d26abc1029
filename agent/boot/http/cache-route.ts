// GET/HEAD /cache/t/<grant>/<sha256>: the image cache, served only under a live grant
// (agent/cache/grants.ts). Any other path under /cache/ — /cache/ itself, a malformed grant
// or digest, an unknown or lapsed grant, a digest not cached — is a 404; a boot grant while
// this agent does not hold the boot lease is a 503, as is a transfer past MAX_CACHE_TRANSFERS
// at once. Ranges (iPXE's sanboot reads them) and HEAD are ranged-file.ts's.
import type http from 'node:http';
import type { CacheGrants } from '../../cache/grants';
import { grantPattern } from '../../cache/grants';
import { sha256Pattern, type ImageCacheStore } from '../../cache/store';
import type { AgentLog } from '../../common/log';
import { sendRangedFile, TransferSlots } from './ranged-file';
import { sendText, type BootHttpRoute } from './server';

const CACHE_PATH_PREFIX = '/cache/';
const GRANT_PREFIX = '/cache/t/';
/** Transfers at once: past it a granted request is told to come back (503), not queued. */
const MAX_CACHE_TRANSFERS = 256;

interface CacheRouteDeps {
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

export function cacheRoute(deps: CacheRouteDeps): BootHttpRoute {
  const notFound = (res: http.ServerResponse) => sendText(res, 404, 'not found\n');
  const slots = new TransferSlots(deps.maxTransfers ?? MAX_CACHE_TRANSFERS);
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
      await slots.run(res, async () => {
        deps.store.touch(sha256);
        try {
          await sendRangedFile(req, res, { source: { path: file }, size: copy.sizeBytes, etag: `"${sha256}"`, cacheControl: 'no-store' });
        } catch (error) {
          // The copy was evicted mid-read: nothing more to send.
          deps.log.info('image cache: a transfer ended early', { sha256, error: (error as Error).message });
          res.destroy();
        }
      });
    },
  };
}
