// metal.discovered (spec 001): the machines a site's agents saw in the last 24 h, merged
// per MAC over the agents, newest first, at most 256, each with the enrolled machine that
// has the MAC (`nodeId`) and the machine it is the candidate of (`candidateFor`).
import type { DbOrTx } from '../db';
import { normalizeMac } from '../../core/mac';
import { macsOf } from './confirm-mac';
import { MAX_DISCOVERED_ENTRIES, type DiscoveredMachine } from '../../core/schemas/discovery';

export const DISCOVERED_WINDOW_MS = 24 * 3_600_000;
/** Nodes that are agents, not machines: they never own a discovered MAC. */
const AGENT_ROLES = ['site', 'ramdisk', 'node'];

interface SeenRow {
  agentNodeId: string;
  mac: string;
  productUuid: string | null;
  arch: string;
  relay: string | null;
  firstSeen: Date;
  lastSeen: Date;
  count: number;
}

interface Merged {
  mac: string;
  /** The rows, newest first: the newest one that names a UUID or an arch speaks for the MAC. */
  rows: SeenRow[];
}

function mergeRows(rows: readonly SeenRow[]): Merged[] {
  const byMac = new Map<string, Merged>();
  for (const row of [...rows].sort((a, b) => b.lastSeen.getTime() - a.lastSeen.getTime())) {
    const merged = byMac.get(row.mac) ?? { mac: row.mac, rows: [] };
    merged.rows.push(row);
    byMac.set(row.mac, merged);
  }
  return [...byMac.values()];
}

const distinctSorted = (values: Iterable<string | null>): string[] => [...new Set([...values].filter((v): v is string => v !== null))].sort();

/** MAC → the enrolled machine that has it, and MAC → the machine it is a candidate of. */
async function siteMachinesByMac(db: DbOrTx, siteId: string): Promise<{ owners: Map<string, string>; candidates: Map<string, string> }> {
  const nodes = await db.node.findMany({
    where: { siteId, deletedAt: null, role: { notIn: AGENT_ROLES } },
    select: { id: true, macs: true, discoveredMac: true },
    orderBy: { id: 'asc' },
  });
  const owners = new Map<string, string>();
  const candidates = new Map<string, string>();
  for (const node of nodes) {
    for (const mac of macsOf(node)) if (!owners.has(mac)) owners.set(mac, node.id);
    const candidate = node.discoveredMac ? normalizeMac(node.discoveredMac) : undefined;
    if (candidate && !candidates.has(candidate)) candidates.set(candidate, node.id);
  }
  return { owners, candidates };
}

export async function listDiscovered(db: DbOrTx, siteId: string, now: Date = new Date()): Promise<DiscoveredMachine[]> {
  const rows = await db.discoveredMac.findMany({ where: { siteId, lastSeen: { gte: new Date(now.getTime() - DISCOVERED_WINDOW_MS) } } });
  const merged = mergeRows(rows)
    .sort((a, b) => (b.rows[0] as SeenRow).lastSeen.getTime() - (a.rows[0] as SeenRow).lastSeen.getTime() || (a.mac < b.mac ? -1 : 1))
    .slice(0, MAX_DISCOVERED_ENTRIES);
  const { owners, candidates } = await siteMachinesByMac(db, siteId);
  return merged.map(({ mac, rows: seen }) => {
    const newest = seen[0] as SeenRow;
    const nodeId = owners.get(mac);
    const candidateFor = candidates.get(mac);
    return {
      mac,
      productUuid: seen.find((r) => r.productUuid !== null)?.productUuid ?? null,
      arch: seen.find((r) => r.arch !== 'unknown')?.arch ?? newest.arch,
      firstSeen: new Date(Math.min(...seen.map((r) => r.firstSeen.getTime()))).toISOString(),
      lastSeen: newest.lastSeen.toISOString(),
      count: seen.reduce((sum, r) => sum + r.count, 0),
      relays: distinctSorted(seen.map((r) => r.relay)),
      agentNodeIds: distinctSorted(seen.map((r) => r.agentNodeId)),
      ...(nodeId ? { nodeId } : {}),
      ...(candidateFor ? { candidateFor } : {}),
    };
  });
}
