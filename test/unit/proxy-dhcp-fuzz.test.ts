// Fuzz of proxy DHCP's reader and decision: 120,000 malformed packets from a fixed seed
// (replayable), each malformed by construction, most of them built from a request that would
// be answered (a known MAC, PXEClient, option 93). None throws, none is answered, and the
// heap does not grow with them. Then 20,000 well-formed DISCOVERs from unknown MACs show the
// discovered list stays at its bound.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { DiscoveredPxeClients, MAX_DISCOVERED_CLIENTS } from '../../agent/boot/discovered';
import { BootEntryStore } from '../../agent/boot/entries';
import { decideProxyDhcp, type ProxyDhcpContext } from '../../agent/boot/dhcp/handler';
import { decodeDhcpPacket } from '../../agent/boot/dhcp/packet';
import { pxeRequest } from '../helpers/pxe-request';
import { seededRandom } from '../helpers/tftp';

const PACKETS = 120_000;
const SEED = 0xd4c9;
const KNOWN_MAC = '52:54:00:12:34:56';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const dir = mkdtempSync(path.join(tmpdir(), 'proxy-dhcp-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const entries = new BootEntryStore(dir);
entries.put([
  {
    mac: KNOWN_MAC,
    productUuid: null,
    arch: 'BIOS',
    nodeId: 'node_1',
    workflowId: 'wf_1',
    tokenRef: 'sec_abc',
    notAfter: new Date(Date.now() + 3_600_000).toISOString(),
  },
]);
const context: ProxyDhcpContext = {
  entries,
  state: { active: true, epoch: 1 },
  config: { serverIp: '10.0.0.2', bootFiles: { bios: 'undionly.kpxe', x86_64Efi: 'snponly.efi', arm64Efi: 'ipxe-arm64.efi' } },
  httpBaseUrl: 'http://10.0.0.2:8081',
};

/** Where each option of a well-formed request starts (code byte), from byte 240 to END. */
function optionOffsets(packet: Buffer): number[] {
  const offsets: number[] = [];
  for (let at = 240; packet[at] !== 255; at += 2 + (packet[at + 1] as number)) offsets.push(at);
  return offsets;
}

/** Packet n: one of seven kinds of malformed, each invalid by construction. */
function malformedPacket(random: () => number, n: number): Buffer {
  const int = (max: number) => Math.floor(random() * max);
  const bytes = (length: number) => Buffer.from(Array.from({ length }, () => int(256)));
  const good = pxeRequest({
    mac: KNOWN_MAC,
    xid: int(2 ** 32),
    messageType: random() < 0.5 ? 1 : 3,
    arch: [0, 7, 9, 11][int(4)] as number,
    ipxe: random() < 0.3,
    uuid: '4c4c4544-0042-3510-8052-b4c04f4e3732',
  });
  switch (n % 7) {
    case 0: // noise of any length, the cookie made wrong
      return ((b) => (b.length >= 240 && b.readUInt32BE(236) === 0x63825363 ? Buffer.concat([b.subarray(0, 236), Buffer.from([0, 0, 0, 0])]) : b))(
        bytes(int(1600)),
      );
    case 1: // cut anywhere before END
      return good.subarray(0, int(good.length - 1));
    case 2: {
      // an option's length running past the end
      const offsets = optionOffsets(good);
      const at = offsets[int(offsets.length)] as number;
      const copy = Buffer.from(good);
      copy[at + 1] = Math.min(255, good.length - at - 2 + 1 + int(200));
      return copy.subarray(0, Math.min(copy.length, at + 2 + (copy[at + 1] as number) - 1 - int(3)));
    }
    case 3: {
      // a bad header field: op, htype, hlen, the cookie, or a broadcast/zero chaddr
      const copy = Buffer.from(good);
      const field = int(5);
      if (field === 0) copy[0] = [0, 3, 255][int(3)] as number;
      else if (field === 1) copy[1] = 2 + int(254);
      else if (field === 2) copy[2] = [0, 5, 7, 16, 255][int(5)] as number;
      else if (field === 3) copy.writeUInt32BE((0x63825363 ^ (1 + int(0xffffffff))) >>> 0, 236);
      else copy.fill(random() < 0.5 ? 0 : 0xff, 28, 34);
      return copy;
    }
    case 4: // no END, random option bytes after the options
      return Buffer.concat([good.subarray(0, good.length - 1), bytes(int(300)).map((b) => (b === 255 ? 254 : b))]);
    case 5: {
      // well-formed bytes, wrong content for the decision: a second option 53 or 93 (RFC 3396
      // concatenates them into a bad length) or a vendor class that is no PXE client; with
      // random options 43, 77, 94, 97 and 175 around it
      const junk: Array<[number, number[]]> = [43, 77, 94, 97, 175].filter(() => random() < 0.5).map((code) => [code, [...bytes(int(40))]]);
      const flaw = int(3);
      if (flaw === 2) {
        const vendorClass = `x${bytes(int(30)).toString('latin1')}`;
        return pxeRequest({ mac: KNOWN_MAC, xid: n, messageType: 1, arch: 0, vendorClass, extra: junk });
      }
      const extra: Array<[number, number[]]> = [...junk, flaw === 0 ? [53, [...bytes(1 + int(3))]] : [93, [...bytes(1 + 2 * int(3))]]];
      return pxeRequest({ mac: KNOWN_MAC, xid: n, messageType: 1, arch: 0, extra });
    }
    default: {
      // oversized: a well-formed request padded past the largest packet accepted
      return Buffer.concat([good.subarray(0, good.length - 1), Buffer.alloc(4096 - good.length + 2 + int(2000)), Buffer.from([255])]);
    }
  }
}

describe('proxy DHCP under malformed input', () => {
  it(`answers none of ${PACKETS} malformed packets, records none, throws nothing and holds no memory`, () => {
    const random = seededRandom(SEED);
    const discovered = new DiscoveredPxeClients((mac) => entries.get(mac) !== undefined);
    // Warm up the code paths so the heap baseline includes compiled code.
    for (let n = 0; n < 600; n++) decodeDhcpPacket(malformedPacket(random, n));
    const before = heapAfterGc();
    const problems: string[] = [];
    let decided = 0;
    for (let n = 0; n < PACKETS; n++) {
      const bytes = malformedPacket(random, n);
      try {
        const packet = decodeDhcpPacket(bytes);
        if (!packet) continue;
        const decision = decideProxyDhcp(packet, n % 2 === 0 ? 'dhcp' : 'pxe', context);
        if ('answer' in decision) problems.push(`#${n} answered: ${bytes.toString('hex')}`);
        else if (decision.discovered) discovered.record(decision.discovered);
        else decided += 1;
      } catch (error) {
        problems.push(`#${n} threw ${(error as Error).message}: ${bytes.toString('hex')}`);
      }
    }
    const growth = heapAfterGc() - before;
    expect(problems.slice(0, 5)).toEqual([]);
    expect(decided).toBe(Math.ceil(PACKETS / 7)); // kind 5 reaches the decision, every other kind stops at the reader
    expect(discovered.list()).toEqual([]);
    expect(growth).toBeLessThan(4 * 1024 * 1024);
  });

  it(`keeps at most ${MAX_DISCOVERED_CLIENTS} of 20,000 unknown PXE clients`, () => {
    const random = seededRandom(SEED + 1);
    const discovered = new DiscoveredPxeClients((mac) => entries.get(mac) !== undefined);
    const before = heapAfterGc();
    for (let n = 0; n < 20_000; n++) {
      const mac = `52:54:01:${[0, 0, 0]
        .map(() =>
          Math.floor(random() * 256)
            .toString(16)
            .padStart(2, '0'),
        )
        .join(':')}`;
      const decision = decideProxyDhcp(decodeDhcpPacket(pxeRequest({ mac, xid: n, messageType: 1, arch: 7 }))!, 'dhcp', context);
      expect('answer' in decision).toBe(false);
      if ('ignored' in decision && decision.discovered) discovered.record(decision.discovered);
    }
    expect(discovered.list()).toHaveLength(MAX_DISCOVERED_CLIENTS);
    expect(heapAfterGc() - before).toBeLessThan(4 * 1024 * 1024);
  });
});
