// PXE clients proxy DHCP heard from that have no boot entry (spec 001, "discovering new
// machines"): what the agent reports so an operator can enroll them. The packets are
// unauthenticated, so only well-formed fields are kept (a MAC, a canonical UUID, an arch as
// [a-z0-9_-]{1,32}, a relay as an IPv4 address), at most MAX_CLIENTS, each for a day after
// it was last seen, and a MAC leaves the list once it has an entry.
import { isIPv4 } from 'node:net';
import { normalizeMac } from '../../core/mac';

export const MAX_DISCOVERED_CLIENTS = 256;
export const DISCOVERED_TTL_MS = 24 * 3_600_000;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const archPattern = /^[a-z0-9_-]{1,32}$/;

/** One packet's worth: what the proxy DHCP handler saw. */
export interface PxeSighting {
  mac: string;
  uuid: string | null;
  arch: string;
  giaddr: string | null;
}

export interface DiscoveredPxeClient extends PxeSighting {
  firstSeen: string;
  lastSeen: string;
  count: number;
}

interface Tracked {
  sighting: PxeSighting;
  firstSeen: number;
  lastSeen: number;
  count: number;
}

export class DiscoveredPxeClients {
  // Insertion order is last-seen order (a sighting moves its MAC to the end): the first is the oldest.
  private readonly clients = new Map<string, Tracked>();

  constructor(
    /** Whether a MAC has a live boot entry now (BootEntryStore.get). */
    private readonly hasEntry: (mac: string) => boolean,
    private readonly max = MAX_DISCOVERED_CLIENTS,
    private readonly ttlMs = DISCOVERED_TTL_MS,
  ) {}

  /** Records a sighting; answers whether the MAC is new to the list (worth a log line). */
  record(sighting: PxeSighting, now = Date.now()): boolean {
    const mac = normalizeMac(sighting.mac);
    if (!mac) return false;
    const clean: PxeSighting = {
      mac,
      uuid: sighting.uuid !== null && uuidPattern.test(sighting.uuid) ? sighting.uuid : null,
      arch: archPattern.test(sighting.arch) ? sighting.arch : 'unknown',
      giaddr: sighting.giaddr !== null && isIPv4(sighting.giaddr) ? sighting.giaddr : null,
    };
    const known = this.clients.get(mac);
    this.clients.delete(mac);
    this.clients.set(mac, { sighting: clean, firstSeen: known?.firstSeen ?? now, lastSeen: now, count: (known?.count ?? 0) + 1 });
    while (this.clients.size > this.max) {
      const oldest = this.clients.keys().next().value as string;
      this.clients.delete(oldest);
    }
    return !known;
  }

  /** The clients seen within the last day that still have no boot entry, oldest sighting first. */
  list(now = Date.now()): DiscoveredPxeClient[] {
    const out: DiscoveredPxeClient[] = [];
    for (const [mac, tracked] of this.clients) {
      if (now - tracked.lastSeen >= this.ttlMs || this.hasEntry(mac)) {
        this.clients.delete(mac);
        continue;
      }
      out.push({ ...tracked.sighting, firstSeen: new Date(tracked.firstSeen).toISOString(), lastSeen: new Date(tracked.lastSeen).toISOString(), count: tracked.count });
    }
    return out;
  }

  /** Drops a MAC (it was just answered: it has an entry now). */
  forget(mac: string): void {
    this.clients.delete(mac);
  }
}
