// Matching a PXE-discovered MAC to a machine enrolled with its product UUID and no MACs
// (spec 001, "Discovering new machines"). Discovery data is unauthenticated DHCP, so a MAC
// becomes only a candidate, and only when nothing else could explain the sighting: seen
// first right after metal's own power cycle, the only MAC its UUID came from, a UUID no
// other machine of the site shares, and a MAC no enrolled machine has.
import type { DbOrTx } from '../db';
import { productUuidSpellings, sameProductUuid } from '../../core/product-uuid';
import { nodeWithMac } from './confirm-mac';

/** A sighting counts only if it was first seen this long after the power command… */
export const MATCH_WINDOW_MS = 10 * 60_000;
/** …or this much before it (clocks of the control plane and the site agent differ). */
export const MATCH_CLOCK_SLACK_MS = 30_000;
const LOOKBACK_MS = 24 * 3_600_000;

/** UUIDs firmware ships when the vendor filled in none: shared by every such machine. */
const PLACEHOLDER_UUIDS = [
  '00000000000000000000000000000000',
  'ffffffffffffffffffffffffffffffff',
  '03000200040005000006000700080009',
  '00020003000400050006000700080009',
];

export type NoCandidateReason = 'not-seen' | 'ambiguous' | 'shared-uuid' | 'mac-enrolled';

export type PxeCandidate = { kind: 'candidate'; mac: string; productUuid: string; agentNodeId: string } | { kind: 'none'; reason: NoCandidateReason };

/** A UUID that can name one machine: well-formed and not a firmware placeholder. */
export function isUsableProductUuid(uuid: string | null): uuid is string {
  if (!uuid) return false;
  const spellings = productUuidSpellings(uuid);
  return spellings.length > 0 && !PLACEHOLDER_UUIDS.includes(spellings[0] as string);
}

/** The canonical (8-4-4-4-12, lower case) forms of a UUID's three spellings: how agents report them. */
const canonicalSpellings = (uuid: string): string[] =>
  productUuidSpellings(uuid).map((hex) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);

export async function findPxeCandidate(
  db: DbOrTx,
  query: { nodeId: string; siteId: string; productUuid: string; powerCommandAt: Date; now?: Date },
): Promise<PxeCandidate> {
  const now = query.now ?? new Date();
  const rows = await db.discoveredMac.findMany({
    where: { siteId: query.siteId, productUuid: { in: canonicalSpellings(query.productUuid) }, lastSeen: { gte: new Date(now.getTime() - LOOKBACK_MS) } },
    orderBy: { firstSeen: 'asc' },
  });
  const macs = [...new Set(rows.map((row) => row.mac))];
  if (macs.length === 0) return { kind: 'none', reason: 'not-seen' };
  if (macs.length > 1) return { kind: 'none', reason: 'ambiguous' };
  const mac = macs[0] as string;
  const first = rows[0] as (typeof rows)[number];
  const sinceCommand = first.firstSeen.getTime() - query.powerCommandAt.getTime();
  if (sinceCommand < -MATCH_CLOCK_SLACK_MS || sinceCommand > MATCH_WINDOW_MS) return { kind: 'none', reason: 'not-seen' };
  const others = await db.node.findMany({
    where: { siteId: query.siteId, deletedAt: null, provisionState: { not: null }, id: { not: query.nodeId }, productUuid: { not: null } },
    select: { productUuid: true },
  });
  if (others.some((other) => sameProductUuid(query.productUuid, other.productUuid as string))) return { kind: 'none', reason: 'shared-uuid' };
  if (await nodeWithMac(db, query.siteId, mac)) return { kind: 'none', reason: 'mac-enrolled' };
  return { kind: 'candidate', mac, productUuid: first.productUuid as string, agentNodeId: first.agentNodeId };
}
