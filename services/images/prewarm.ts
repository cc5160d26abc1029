// A site's desired cacheImages: the images its live pools name in policy.prewarmImages,
// resolved in each pool owner's catalog, kept only while they still verify (signed, signer
// not revoked, row untampered), deduplicated by URL. The site agent's spec carries the list.
import type { DbOrTx } from '../db';
import { isIronflowError } from '../../core/errors';
import { resolveImageRef, verifyImageForUse, type CatalogOptions } from './catalog';
import { livePrewarmingPools } from './prewarm-sites';

export interface CacheImage {
  url: string;
  sha256: string;
  format: string;
}

export async function siteCacheImages(db: DbOrTx, siteId: string, options: CatalogOptions = {}): Promise<CacheImage[]> {
  const out: CacheImage[] = [];
  const urls = new Set<string>();
  for (const pool of await livePrewarmingPools(db, { siteId })) {
    for (const ref of pool.prewarmImages) {
      const image = await resolveImageRef(db, pool.tenantId, ref);
      if (!image || urls.has(image.source)) continue;
      try {
        await verifyImageForUse(db, image.id, { verifier: options.verifier });
      } catch (error) {
        if (isIronflowError(error) && error.code === 'INVALID_STATE') continue; // no longer verifies: not pre-warmed
        throw error;
      }
      urls.add(image.source);
      out.push({ url: image.source, sha256: image.sha256, format: image.format });
    }
  }
  return out;
}

/** The digests a site's pre-warm list protects from eviction. */
export async function prewarmDigests(db: DbOrTx, siteId: string, options: CatalogOptions = {}): Promise<Set<string>> {
  return new Set((await siteCacheImages(db, siteId, options)).map((image) => image.sha256));
}
