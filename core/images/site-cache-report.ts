// The control plane's side of a site agent's cache: its images report (the heartbeat's
// `images` section) stored as NodeImageCache rows and turned into image_locations, and what
// the site's spec adds to its pre-warm list: the images deploys pin there while they stream.
import type { Db, DbOrTx } from '../../services/db';
import type { CacheImageReport } from '../schemas/agent-sessions';
import { DEFAULT_PIN_MS, recordImageLocation, syncSiteImageLocations, touchImageLocation } from './locations';
import type { CacheImage } from '../../services/images/prewarm';

const sameReport = (a: readonly CacheImageReport[], b: readonly CacheImageReport[]) =>
  a.length === b.length && a.every((row, i) => row.sha256 === b[i]?.sha256 && row.state === b[i]?.state && row.sizeBytes === b[i]?.sizeBytes);

/**
 * Stores an agent's report, replacing its rows whole but only when they changed (heartbeats
 * mostly repeat themselves), then rebuilds the site's image_locations. True when it changed.
 */
export async function recordSiteCacheReport(db: Db, input: { nodeId: string; siteId: string; images: readonly CacheImageReport[] }): Promise<boolean> {
  const byDigest = new Map(input.images.map((image) => [image.sha256, image]));
  const reported = [...byDigest.values()].sort((a, b) => a.sha256.localeCompare(b.sha256));
  const stored = (await db.nodeImageCache.findMany({ where: { nodeId: input.nodeId }, orderBy: { sha256: 'asc' } })).map((row) => ({
    sha256: row.sha256,
    state: row.state as CacheImageReport['state'],
    sizeBytes: Number(row.sizeBytes),
  }));
  if (sameReport(stored, reported)) return false;
  await db.$transaction(async (tx) => {
    await tx.nodeImageCache.deleteMany({ where: { nodeId: input.nodeId } });
    for (const image of reported) {
      await tx.nodeImageCache.create({ data: { nodeId: input.nodeId, sha256: image.sha256, state: image.state, sizeBytes: BigInt(image.sizeBytes) } });
    }
    await syncSiteImageLocations(tx, input.siteId);
  });
  return true;
}

/** The images deploys pin at a site right now (their sources, for the agent to cache too). */
export async function pinnedSiteImages(db: DbOrTx, siteId: string, now: Date = new Date()): Promise<CacheImage[]> {
  const pinned = await db.imageLocation.findMany({ where: { siteId, pinnedUntil: { gt: now } }, select: { imageId: true } });
  if (!pinned.length) return [];
  const images = await db.image.findMany({ where: { id: { in: pinned.map((p) => p.imageId) } }, select: { source: true, sha256: true, format: true } });
  return images.map((image) => ({ url: image.source, sha256: image.sha256, format: image.format }));
}

/**
 * Pins an image at a site for a deploy (or a sanboot) that streams it: a location row is
 * made when the site holds none yet (`pulling`: the pin adds it to the site's list), so the
 * agent caches it and never evicts it while the pin lasts. `pinForMs` 0 unpins.
 */
export async function pinImageAtSite(
  db: DbOrTx,
  input: { imageId: string; siteId: string; sizeBytes: bigint | number; pinForMs?: number },
  now: Date = new Date(),
): Promise<void> {
  const pinForMs = input.pinForMs ?? DEFAULT_PIN_MS;
  const known = await touchImageLocation(db, { imageId: input.imageId, siteId: input.siteId, pinForMs }, now);
  if (known || pinForMs === 0) return;
  await recordImageLocation(db, { imageId: input.imageId, siteId: input.siteId, state: 'pulling', sizeBytes: input.sizeBytes });
  await touchImageLocation(db, { imageId: input.imageId, siteId: input.siteId, pinForMs }, now);
}
