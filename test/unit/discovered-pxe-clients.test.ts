// The site agent's discovered list beyond proxy DHCP: iPXE script fetches (counted only for a
// MAC DHCP already listed while proxy DHCP runs), the `added` signal that asks for an early
// report (at most one every 30 s), the list as the heartbeat carries it, and the heartbeat
// schema's bounds.
import { describe, expect, it } from 'vitest';
import { DiscoveredPxeClients, MAX_DISCOVERED_CLIENTS } from '../../agent/boot/discovered';
import { ReportThrottle } from '../../agent/site/report-throttle';
import { DISCOVERED_REPORT_EVERY_MS } from '../../agent/site/session';
import { heartbeatSchema } from '../../core/schemas/agent-sessions';
import { discoveryReportSchema, MAX_DISCOVERED_COUNT } from '../../core/schemas/discovery';

const t = Date.parse('2026-11-30T10:00:00Z');
const uuid = '4c4c4544-0042-3510-8052-b4c04f4e3732';
const macOf = (i: number) => `52:54:00:cc:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;

describe('script fetches as sightings', () => {
  it('with proxy DHCP on, a fetch counts only for a MAC DHCP listed, and keeps what DHCP said', () => {
    const list = new DiscoveredPxeClients(() => false);
    expect(list.recordFetch({ mac: '52:54:00:aa:00:01', uuid, arch: 'x86_64_efi', giaddr: null }, { onlyKnown: true }, t)).toBe(false);
    expect(list.list(t)).toEqual([]);

    list.record({ mac: '52:54:00:aa:00:01', uuid: null, arch: 'x86_64_efi', giaddr: '10.1.0.1' }, t);
    // A fetch naming no arch and a UUID: the UUID is taken, DHCP's arch and relay stay.
    expect(list.recordFetch({ mac: '52-54-00-AA-00-01', uuid, arch: 'unknown', giaddr: null }, { onlyKnown: true }, t + 1000)).toBe(false);
    expect(list.report(t + 2000)).toEqual([
      {
        mac: '52:54:00:aa:00:01',
        productUuid: uuid,
        arch: 'x86_64_efi',
        relay: '10.1.0.1',
        firstSeen: new Date(t).toISOString(),
        lastSeen: new Date(t + 1000).toISOString(),
        count: 2,
      },
    ]);
  });

  it('with proxy DHCP on, a MAC DHCP listed more than a day ago counts no more', () => {
    const list = new DiscoveredPxeClients(() => false);
    list.record({ mac: '52:54:00:aa:00:02', uuid: null, arch: 'bios', giaddr: null }, t);
    expect(list.recordFetch({ mac: '52:54:00:aa:00:02', uuid: null, arch: 'bios', giaddr: null }, { onlyKnown: true }, t + 24 * 3_600_000)).toBe(false);
    expect(list.list(t + 24 * 3_600_000)).toEqual([]);
  });

  it('with proxy DHCP off, every fetch counts, with well-formed fields only and no relay', () => {
    const list = new DiscoveredPxeClients(() => false);
    expect(list.recordFetch({ mac: '52:54:00:aa:00:03', uuid: 'not-a-uuid', arch: 'BAD ARCH', giaddr: '10.9.9.9' }, { onlyKnown: false }, t)).toBe(true);
    expect(list.recordFetch({ mac: 'garbage', uuid: null, arch: 'bios', giaddr: null }, { onlyKnown: false }, t)).toBe(false);
    expect(list.report(t)).toEqual([
      {
        mac: '52:54:00:aa:00:03',
        productUuid: null,
        arch: 'unknown',
        relay: null,
        firstSeen: new Date(t).toISOString(),
        lastSeen: new Date(t).toISOString(),
        count: 1,
      },
    ]);
  });

  it(`stays at ${MAX_DISCOVERED_CLIENTS} machines however many MACs fetch, the most recent kept`, () => {
    const list = new DiscoveredPxeClients(() => false);
    for (let i = 0; i < 1000; i += 1) list.recordFetch({ mac: macOf(i), uuid: null, arch: 'x86_64', giaddr: null }, { onlyKnown: false }, t + i);
    const report = list.report(t + 1000);
    expect(report).toHaveLength(MAX_DISCOVERED_CLIENTS);
    expect(report[0]?.mac).toBe(macOf(1000 - MAX_DISCOVERED_CLIENTS));
    // What the agent sends always passes the control plane's heartbeat schema.
    expect(heartbeatSchema.safeParse({ discovered: report }).success).toBe(true);
  });

  it('signals `added` once per new MAC, not on every packet', () => {
    const list = new DiscoveredPxeClients(() => false);
    const added: string[] = [];
    list.on('added', (mac) => added.push(mac));
    for (let i = 0; i < 5; i += 1) {
      list.record({ mac: '52:54:00:aa:00:04', uuid: null, arch: 'bios', giaddr: null }, t + i);
      list.recordFetch({ mac: '52:54:00:aa:00:05', uuid: null, arch: 'bios', giaddr: null }, { onlyKnown: false }, t + i);
    }
    expect(added).toEqual(['52:54:00:aa:00:04', '52:54:00:aa:00:05']);
  });
});

describe('early reports', () => {
  it('a burst of new MACs asks for one early report per 30 s, not one per MAC', () => {
    let clock = 0;
    const throttle = new ReportThrottle(DISCOVERED_REPORT_EVERY_MS, () => clock);
    const list = new DiscoveredPxeClients(() => false);
    let early = 0;
    list.on('added', () => void (throttle.take() && (early += 1)));
    for (let i = 0; i < 500; i += 1) list.recordFetch({ mac: macOf(i), uuid: null, arch: 'bios', giaddr: null }, { onlyKnown: false }, t);
    expect(early).toBe(1);
    clock = DISCOVERED_REPORT_EVERY_MS - 1;
    list.recordFetch({ mac: macOf(600), uuid: null, arch: 'bios', giaddr: null }, { onlyKnown: false }, t);
    expect(early).toBe(1);
    clock = DISCOVERED_REPORT_EVERY_MS;
    list.recordFetch({ mac: macOf(601), uuid: null, arch: 'bios', giaddr: null }, { onlyKnown: false }, t);
    expect(early).toBe(2);
    expect(DISCOVERED_REPORT_EVERY_MS).toBe(30_000);
  });
});

describe('the heartbeat schema for a discovered list', () => {
  const entry = {
    mac: '52:54:00:aa:00:01',
    productUuid: uuid,
    arch: 'x86_64_efi',
    firstSeen: new Date(t).toISOString(),
    lastSeen: new Date(t).toISOString(),
    count: 1,
    relay: '10.1.0.1',
  };

  it('takes well-formed entries (a MAC in any spelling comes out canonical)', () => {
    expect(discoveryReportSchema.parse([{ ...entry, mac: '52-54-00-AA-00-01', relay: null, productUuid: null }])).toEqual([
      { ...entry, relay: null, productUuid: null },
    ]);
  });

  it.each([
    ['a malformed MAC', { mac: 'ff:ff:ff:ff:ff:ff' }],
    ['an upper-case UUID', { productUuid: uuid.toUpperCase() }],
    ['an arch outside [a-z0-9_-]{1,32}', { arch: 'x'.repeat(33) }],
    ['a relay that is no IPv4 address', { relay: 'fd00::1' }],
    ['a count of 0', { count: 0 }],
    ['a count past 32 bits', { count: MAX_DISCOVERED_COUNT + 1 }],
    ['a date that is no ISO datetime', { lastSeen: 'yesterday' }],
    ['an unknown field', { hostname: 'x' }],
  ])('refuses %s', (_what, change) => {
    expect(discoveryReportSchema.safeParse([{ ...entry, ...change }]).success).toBe(false);
  });

  it(`refuses more than ${MAX_DISCOVERED_CLIENTS} entries`, () => {
    const many = Array.from({ length: MAX_DISCOVERED_CLIENTS + 1 }, (_, i) => ({ ...entry, mac: macOf(i) }));
    expect(heartbeatSchema.safeParse({ discovered: many }).success).toBe(false);
    expect(heartbeatSchema.safeParse({ discovered: many.slice(1) }).success).toBe(true);
  });
});
