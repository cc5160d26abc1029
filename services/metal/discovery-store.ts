// The control plane's side of PXE discovery (spec 001, "Discovering new machines"): each
// live site agent's list, as its heartbeat carries it, stored whole per agent and rewritten
// only when its digest changes (heartbeats mostly repeat themselves). Storing binds nothing:
// the list is unauthenticated DHCP and HTTP, and a MAC boots a machine only once confirmed.
import { createHash } from 'node:crypto';
import type { Db } from '../db';
import type { DiscoveryEntry } from '../../core/schemas/discovery';

/** One row per MAC (the newest sighting wins a duplicate), sorted by MAC: the canonical form. */
function canonicalEntries(entries: readonly DiscoveryEntry[]): DiscoveryEntry[] {
  const byMac = new Map<string, DiscoveryEntry>();
  for (const entry of entries) {
    const known = byMac.get(entry.mac);
    if (!known || Date.parse(entry.lastSeen) > Date.parse(known.lastSeen)) byMac.set(entry.mac, entry);
  }
  return [...byMac.values()].sort((a, b) => (a.mac < b.mac ? -1 : a.mac > b.mac ? 1 : 0));
}

/** sha256 over the entries' fields in a fixed order (key order in the request never matters). */
export function discoveryDigest(entries: readonly DiscoveryEntry[]): string {
  const canonical = canonicalEntries(entries).map((e) => [e.mac, e.productUuid, e.arch, e.firstSeen, e.lastSeen, e.count, e.relay]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** Replaces the agent's stored list when it changed; true when it wrote. */
export async function recordDiscoveryReport(
  db: Db,
  input: { agentNodeId: string; siteId: string; entries: readonly DiscoveryEntry[] },
  now: Date = new Date(),
): Promise<boolean> {
  const digest = discoveryDigest(input.entries);
  const stored = await db.discoveryReport.findUnique({ where: { agentNodeId: input.agentNodeId } });
  if (stored?.digest === digest && stored.siteId === input.siteId) return false;
  const rows = canonicalEntries(input.entries).map((e) => ({
    agentNodeId: input.agentNodeId,
    siteId: input.siteId,
    mac: e.mac,
    productUuid: e.productUuid,
    arch: e.arch,
    relay: e.relay,
    firstSeen: new Date(e.firstSeen),
    lastSeen: new Date(e.lastSeen),
    count: e.count,
  }));
  await db.$transaction(async (tx) => {
    await tx.discoveredMac.deleteMany({ where: { agentNodeId: input.agentNodeId } });
    if (rows.length) await tx.discoveredMac.createMany({ data: rows });
    await tx.discoveryReport.upsert({
      where: { agentNodeId: input.agentNodeId },
      create: { agentNodeId: input.agentNodeId, siteId: input.siteId, digest, updatedAt: now },
      update: { siteId: input.siteId, digest, updatedAt: now },
    });
  });
  return true;
}
