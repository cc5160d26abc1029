// PXE clients without a boot entry (spec 001, "discovering new machines"), heard by proxy
// DHCP or fetching an iPXE script: what the agent reports in its heartbeat so an operator
// can bind an enrolled machine's MAC. The packets are unauthenticated, so only well-formed
// fields are kept (a MAC, a canonical UUID, an arch as [a-z0-9_-]{1,32}, a relay as an IPv4
// address), at most MAX_CLIENTS, each for a day after it was last seen, and a MAC leaves
// the list once it has an entry. A MAC new to the list emits `added` (the session reports soon).
import { EventEmitter } from 'node:events';
import { isIPv4 } from 'node:net';
import { normalizeMac } from '../../core/mac';
import { RecentCache } from '../../core/recent-cache';
import { MAX_DISCOVERED_COUNT, type DiscoveryEntry } from '../../core/schemas/discovery';

export const MAX_DISCOVERED_CLIENTS = 256;
const DISCOVERED_TTL_MS = 24 * 3_600_000;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const archPattern = /^[a-z0-9_-]{1,32}$/;

/** One packet's worth: what the proxy DHCP handler saw. */
export interface PxeSighting {
  mac: string;
  uuid: string | null;
  arch: string;
  giaddr: string | null;
}

interface DiscoveredPxeClient extends PxeSighting {
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

interface DiscoveredEvents {
  added: [mac: string];
}

export class DiscoveredPxeClients extends EventEmitter<DiscoveredEvents> {
  // Last-seen order (a sighting sets its MAC again; lookups only peek): the first is the oldest.
  private readonly clients: RecentCache<string, Tracked>;

  constructor(
    /** Whether a MAC has a live boot entry now (BootEntryStore.get). */
    private readonly hasEntry: (mac: string) => boolean,
    max = MAX_DISCOVERED_CLIENTS,
    private readonly ttlMs = DISCOVERED_TTL_MS,
  ) {
    super();
    this.clients = new RecentCache(max);
  }

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
    const known = this.live(mac, now);
    const count = Math.min((known?.count ?? 0) + 1, MAX_DISCOVERED_COUNT);
    this.clients.set(mac, { sighting: clean, firstSeen: known?.firstSeen ?? now, lastSeen: now, count });
    if (!known) this.emit('added', mac);
    return !known;
  }

  /**
   * An iPXE script fetch from a MAC without a boot entry. Anyone can fetch a URL, so with
   * `onlyKnown` (the agent runs proxy DHCP) it counts only for a MAC DHCP already listed.
   * A fetch names no relay and maybe no UUID or arch: those keep what DHCP said.
   */
  recordFetch(sighting: PxeSighting, options: { onlyKnown: boolean }, now = Date.now()): boolean {
    const mac = normalizeMac(sighting.mac);
    if (!mac) return false;
    const known = this.live(mac, now)?.sighting;
    if (options.onlyKnown && !known) return false;
    const uuid = sighting.uuid !== null && uuidPattern.test(sighting.uuid) ? sighting.uuid : (known?.uuid ?? null);
    const arch = archPattern.test(sighting.arch) && sighting.arch !== 'unknown' ? sighting.arch : (known?.arch ?? 'unknown');
    return this.record({ mac, uuid, arch, giaddr: known?.giaddr ?? null }, now);
  }

  /** The clients seen within the last day that still have no boot entry, oldest sighting first. */
  list(now = Date.now()): DiscoveredPxeClient[] {
    const out: DiscoveredPxeClient[] = [];
    for (const [mac, tracked] of this.clients) {
      if (now - tracked.lastSeen >= this.ttlMs || this.hasEntry(mac)) {
        this.clients.delete(mac);
        continue;
      }
      out.push({
        ...tracked.sighting,
        firstSeen: new Date(tracked.firstSeen).toISOString(),
        lastSeen: new Date(tracked.lastSeen).toISOString(),
        count: tracked.count,
      });
    }
    return out;
  }

  /** The list as the heartbeat carries it (core/schemas/discovery.ts), oldest sighting first. */
  report(now = Date.now()): DiscoveryEntry[] {
    return this.list(now).map((client) => ({
      mac: client.mac,
      productUuid: client.uuid,
      arch: client.arch,
      firstSeen: client.firstSeen,
      lastSeen: client.lastSeen,
      count: client.count,
      relay: client.giaddr,
    }));
  }

  /** Drops a MAC (it was just answered: it has an entry now). */
  forget(mac: string): void {
    this.clients.delete(mac);
  }

  /** A listed MAC still within its day (a lapsed one starts over as new). */
  private live(mac: string, now: number): Tracked | undefined {
    const tracked = this.clients.peek(mac);
    return tracked && now - tracked.lastSeen < this.ttlMs ? tracked : undefined;
  }
}
