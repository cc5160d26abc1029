// Where images are cached: image_locations per (image, site), derived from the site agents'
// cache reports (NodeImageCache, by digest). The control plane reads them to route deploys
// to a warm cache, to pin an image while a deploy streams it, and to pick what to evict.
import type { ImageLocation } from '../../generated/prisma-sqlite/client';
import type { DbOrTx } from '../../services/db';
import { IronflowError } from '../errors';

export const imageLocationStates = ['pulling', 'ready', 'failed', 'evicting'] as const;
export type ImageLocationState = (typeof imageLocationStates)[number];

/** How long a deploy's pin lasts unless it says otherwise; a stream touches it again to extend it. */
export const DEFAULT_PIN_MS = 30 * 60_000;

/** When agents disagree, the site's state is the most useful one: any ready copy serves. */
const statePriority: Record<ImageLocationState, number> = { ready: 0, pulling: 1, evicting: 2, failed: 3 };

function asState(value: string): ImageLocationState {
  return (imageLocationStates as readonly string[]).includes(value) ? (value as ImageLocationState) : 'failed';
}

export async function recordImageLocation(
  db: DbOrTx,
  input: { imageId: string; siteId: string; state: ImageLocationState; sizeBytes: number | bigint },
): Promise<ImageLocation> {
  if (!(imageLocationStates as readonly string[]).includes(input.state)) {
    throw new IronflowError('INVALID_INPUT', `an image location is ${imageLocationStates.join(', ')}; got ${input.state}`, { path: 'state' });
  }
  const sizeBytes = BigInt(input.sizeBytes);
  return db.imageLocation.upsert({
    where: { imageId_siteId: { imageId: input.imageId, siteId: input.siteId } },
    create: { imageId: input.imageId, siteId: input.siteId, state: input.state, sizeBytes },
    update: { state: input.state, sizeBytes },
  });
}

export interface SyncResult {
  siteId: string;
  upserted: number;
  removed: number;
}

/**
 * Rebuilds a site's image_locations from its live site agents' cache reports. Every image
 * whose digest an agent reports gets a row; a row nobody reports any more goes, unless a
 * deploy still pins it.
 */
export async function syncSiteImageLocations(db: DbOrTx, siteId: string, now: Date = new Date()): Promise<SyncResult> {
  const agents = await db.node.findMany({ where: { siteId, role: 'site', deletedAt: null }, select: { id: true } });
  const reports = agents.length ? await db.nodeImageCache.findMany({ where: { nodeId: { in: agents.map((a) => a.id) } } }) : [];
  const byDigest = new Map<string, { state: ImageLocationState; sizeBytes: bigint }>();
  for (const report of reports) {
    const state = asState(report.state);
    const current = byDigest.get(report.sha256);
    if (!current || statePriority[state] < statePriority[current.state]) byDigest.set(report.sha256, { state, sizeBytes: report.sizeBytes });
  }
  const images = byDigest.size ? await db.image.findMany({ where: { sha256: { in: [...byDigest.keys()] } }, select: { id: true, sha256: true } }) : [];
  const seen = new Set<string>();
  for (const image of images) {
    const cached = byDigest.get(image.sha256);
    if (!cached) continue;
    await recordImageLocation(db, { imageId: image.id, siteId, state: cached.state, sizeBytes: cached.sizeBytes });
    seen.add(image.id);
  }
  const stale = await db.imageLocation.findMany({ where: { siteId, imageId: { notIn: [...seen] } } });
  const removable = stale.filter((row) => !row.pinnedUntil || row.pinnedUntil <= now);
  if (removable.length) {
    await db.imageLocation.deleteMany({ where: { siteId, imageId: { in: removable.map((r) => r.imageId) } } });
  }
  return { siteId, upserted: seen.size, removed: removable.length };
}

/**
 * Marks an image at a site as used now and pins it for `pinForMs` (a deploy streaming it
 * touches it as it goes; 0 unpins). False when the site holds no record of the image.
 */
export async function touchImageLocation(db: DbOrTx, input: { imageId: string; siteId: string; pinForMs?: number }, now: Date = new Date()): Promise<boolean> {
  const pinForMs = input.pinForMs ?? DEFAULT_PIN_MS;
  if (!Number.isInteger(pinForMs) || pinForMs < 0)
    throw new IronflowError('INVALID_INPUT', 'pinForMs is a whole number of milliseconds, 0 or more', { path: 'pinForMs' });
  const result = await db.imageLocation.updateMany({
    where: { imageId: input.imageId, siteId: input.siteId },
    data: { lastUsedAt: now, pinnedUntil: pinForMs > 0 ? new Date(now.getTime() + pinForMs) : null },
  });
  return result.count > 0;
}

export interface CachedImage {
  imageId: string;
  ref: string;
  tenantId: string;
  sha256: string;
  sizeBytes: number;
  lastUsedAt: string;
  pinned: boolean;
}

/** The images a site's cache holds verified and ready to serve, most recently used first. */
export async function imagesCachedAt(db: DbOrTx, siteId: string, now: Date = new Date()): Promise<CachedImage[]> {
  const rows = await db.imageLocation.findMany({ where: { siteId, state: 'ready' }, orderBy: { lastUsedAt: 'desc' } });
  if (!rows.length) return [];
  const images = new Map((await db.image.findMany({ where: { id: { in: rows.map((r) => r.imageId) } } })).map((i) => [i.id, i]));
  return rows.flatMap((row) => {
    const image = images.get(row.imageId);
    if (!image) return [];
    return [
      {
        imageId: row.imageId,
        ref: image.ref,
        tenantId: image.tenantId,
        sha256: image.sha256,
        sizeBytes: Number(row.sizeBytes),
        lastUsedAt: row.lastUsedAt.toISOString(),
        pinned: !!row.pinnedUntil && row.pinnedUntil > now,
      },
    ];
  });
}

export interface EvictionCandidate {
  sha256: string;
  /** Every catalog image with these bytes at the site (the cache stores by digest). */
  imageIds: string[];
  sizeBytes: number;
  lastUsedAt: string;
}

/**
 * What to evict to free `bytes` at a site: ready copies, least recently used first, never
 * one that is pinned or whose digest is in `inUse` (the pools' pre-warm digests and every
 * image a deploy streams). Returns fewer bytes than asked when nothing else may go.
 */
export async function evictionCandidates(
  db: DbOrTx,
  siteId: string,
  bytes: number,
  inUse: Iterable<string>,
  now: Date = new Date(),
): Promise<EvictionCandidate[]> {
  const protectedDigests = new Set(inUse);
  const cached = await imagesCachedAt(db, siteId, now);
  const byDigest = new Map<string, { imageIds: string[]; sizeBytes: number; lastUsed: number; pinned: boolean }>();
  for (const image of cached) {
    const entry = byDigest.get(image.sha256) ?? { imageIds: [], sizeBytes: image.sizeBytes, lastUsed: 0, pinned: false };
    entry.imageIds.push(image.imageId);
    entry.lastUsed = Math.max(entry.lastUsed, Date.parse(image.lastUsedAt));
    entry.pinned ||= image.pinned;
    byDigest.set(image.sha256, entry);
  }
  const eligible = [...byDigest.entries()]
    .filter(([sha256, entry]) => !entry.pinned && !protectedDigests.has(sha256))
    .sort((a, b) => a[1].lastUsed - b[1].lastUsed || a[0].localeCompare(b[0]));
  const chosen: EvictionCandidate[] = [];
  let freed = 0;
  for (const [sha256, entry] of eligible) {
    if (freed >= bytes) break;
    chosen.push({ sha256, imageIds: entry.imageIds.sort(), sizeBytes: entry.sizeBytes, lastUsedAt: new Date(entry.lastUsed).toISOString() });
    freed += entry.sizeBytes;
  }
  return chosen;
}
