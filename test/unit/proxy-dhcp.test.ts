import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BootEntry } from '../../core/boot/boot-entry';
import { DiscoveredPxeClients, MAX_DISCOVERED_CLIENTS } from '../../agent/boot/discovered';
import { BootEntryStore } from '../../agent/boot/entries';
import { decideProxyDhcp, type ProxyDhcpContext, type ProxyDhcpDecision, type ProxyDhcpPort } from '../../agent/boot/dhcp/handler';
import { decodeDhcpPacket, encodeDhcpReply } from '../../agent/boot/dhcp/packet';
import { pxeRequest, type PxeRequestSpec } from '../helpers/pxe-request';

const dir = mkdtempSync(path.join(tmpdir(), 'proxy-dhcp-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = (mac: string, arch: BootEntry['arch']): BootEntry => ({
  mac,
  productUuid: null,
  arch,
  nodeId: 'node_1',
  workflowId: 'wf_1',
  tokenRef: 'sec_abc',
  notAfter: new Date(Date.now() + 3_600_000).toISOString(),
});
const entries = new BootEntryStore(dir);
entries.put([entry('52:54:00:00:00:01', 'BIOS'), entry('52:54:00:00:00:02', 'X86_64_EFI'), entry('52:54:00:00:00:03', 'ARM64_EFI')]);

const context = (over: Partial<ProxyDhcpContext> = {}): ProxyDhcpContext => ({
  entries,
  state: { active: true, epoch: 3 },
  config: { serverIp: '10.0.0.2', bootFiles: { bios: 'undionly.kpxe', x86_64Efi: 'snponly.efi', arm64Efi: 'ipxe-arm64.efi' } },
  httpBaseUrl: 'http://10.0.0.2:8081',
  ...over,
});

function decide(spec: Partial<PxeRequestSpec>, port: ProxyDhcpPort = 'dhcp', ctx = context()): ProxyDhcpDecision {
  const packet = decodeDhcpPacket(pxeRequest({ mac: '52:54:00:00:00:01', xid: 0x1234, messageType: port === 'dhcp' ? 1 : 3, ...spec }));
  if (!packet) throw new Error('the test request did not decode');
  return decideProxyDhcp(packet, port, ctx);
}

function answerOf(decision: ProxyDhcpDecision) {
  if (!('answer' in decision)) throw new Error(`no answer: ${decision.ignored}`);
  const bytes = encodeDhcpReply(decision.answer);
  const reply = decodeDhcpPacket(bytes);
  if (!reply) throw new Error('the reply does not decode');
  const option = (code: number) => reply.options.get(code);
  return { bytes, reply, option, text: (code: number) => option(code)?.toString('latin1') };
}

describe('proxy DHCP decisions', () => {
  it('gives a BIOS PXE client undionly.kpxe over TFTP: yiaddr 0, next-server, options 43/53/54/60/66/67/97', () => {
    const uuid = '4c4c4544-0042-3510-8052-b4c04f4e3732';
    const { bytes, reply, option, text } = answerOf(decide({ arch: 0, uuid }));
    expect(bytes.length).toBeGreaterThanOrEqual(300);
    expect(reply.op).toBe(2);
    expect(reply.xid).toBe(0x1234);
    expect(reply.mac).toBe('52:54:00:00:00:01');
    expect(reply.yiaddr).toBe('0.0.0.0');
    expect(reply.siaddr).toBe('10.0.0.2');
    expect(reply.flags & 0x8000).toBe(0x8000);
    expect(reply.file).toBe('undionly.kpxe');
    expect([...(option(53) ?? [])]).toEqual([2]);
    expect([...(option(54) ?? [])]).toEqual([10, 0, 0, 2]);
    expect(text(60)).toBe('PXEClient');
    expect([...(option(43) ?? [])]).toEqual([6, 1, 8, 10, 4, 0, 0x50, 0x58, 0x45, 255]);
    expect(text(66)).toBe('10.0.0.2');
    expect(text(67)).toBe('undionly.kpxe');
    expect(option(97)?.toString('hex')).toBe(`00${uuid.replaceAll('-', '')}`);
  });

  it('picks the build by option 93, not by the entry: x86-64 UEFI (7 and 9) and arm64 UEFI (11)', () => {
    expect(answerOf(decide({ mac: '52:54:00:00:00:02', arch: 7 })).reply.file).toBe('snponly.efi');
    expect(answerOf(decide({ mac: '52:54:00:00:00:02', arch: 9 })).reply.file).toBe('snponly.efi');
    expect(answerOf(decide({ mac: '52:54:00:00:00:03', arch: 11 })).reply.file).toBe('ipxe-arm64.efi');
    expect(answerOf(decide({ mac: '52:54:00:00:00:01', arch: 7 })).reply.file).toBe('snponly.efi');
  });

  it("falls back to option 60's Arch field, then to the entry's arch, for a client without option 93", () => {
    // pxeRequest writes Arch:00000 in option 60 when there is no option 93: BIOS by option 60.
    expect(answerOf(decide({ mac: '52:54:00:00:00:03' })).reply.file).toBe('undionly.kpxe');
    expect(answerOf(decide({ mac: '52:54:00:00:00:03', bareVendorClass: true })).reply.file).toBe('ipxe-arm64.efi');
    expect(answerOf(decide({ mac: '52:54:00:00:00:02', bareVendorClass: true })).reply.file).toBe('snponly.efi');
  });

  it('gives an HTTPClient the URL of the EFI build, with option 60 HTTPClient and no TFTP options', () => {
    const { reply, option, text } = answerOf(decide({ mac: '52:54:00:00:00:02', arch: 16, vendorClass: 'HTTPClient' }));
    expect(reply.file).toBe('http://10.0.0.2:8081/boot/files/snponly.efi');
    expect(text(67)).toBe('http://10.0.0.2:8081/boot/files/snponly.efi');
    expect(text(60)).toBe('HTTPClient');
    expect(option(43)).toBeUndefined();
    expect(option(66)).toBeUndefined();
    expect(answerOf(decide({ mac: '52:54:00:00:00:03', arch: 19, vendorClass: 'HTTPClient' })).reply.file).toBe(
      'http://10.0.0.2:8081/boot/files/ipxe-arm64.efi',
    );
    expect(decide({ arch: 0, vendorClass: 'HTTPClient' })).toEqual({ ignored: 'unsupported-arch' });
  });

  it('gives a client already running iPXE (user class iPXE) chain.ipxe over HTTP', () => {
    for (const arch of [0, 7, 11]) {
      const { reply, option } = answerOf(decide({ arch, ipxe: true }));
      expect(reply.file).toBe('http://10.0.0.2:8081/boot/chain.ipxe');
      expect(option(66)).toBeUndefined();
    }
    // RFC 3004 form: length-prefixed items.
    expect(answerOf(decide({ arch: 0, extra: [[77, [4, ...Buffer.from('iPXE')]]] })).reply.file).toBe('http://10.0.0.2:8081/boot/chain.ipxe');
  });

  it('answers a REQUEST on the PXE port (4011) with an ACK, ciaddr echoed and the broadcast flag left as sent', () => {
    const { reply, option } = answerOf(decide({ arch: 7, ciaddr: '10.0.0.50', flags: 0 }, 'pxe'));
    expect([...(option(53) ?? [])]).toEqual([5]);
    expect(reply.ciaddr).toBe('10.0.0.50');
    expect(reply.yiaddr).toBe('0.0.0.0');
    expect(reply.flags).toBe(0);
    expect(reply.file).toBe('snponly.efi');
  });

  it('keeps giaddr for a relayed request', () => {
    expect(answerOf(decide({ arch: 0, giaddr: '10.1.0.1' })).reply.giaddr).toBe('10.1.0.1');
  });

  it('does not answer an unknown MAC, and says what to record as discovered', () => {
    expect(decide({ mac: '52:54:00:aa:bb:cc', arch: 7, uuid: '4C4C4544-0042-3510-8052-B4C04F4E3732', giaddr: '10.1.0.1' })).toEqual({
      ignored: 'unknown-mac',
      discovered: { mac: '52:54:00:aa:bb:cc', uuid: '4c4c4544-0042-3510-8052-b4c04f4e3732', arch: 'x86_64_efi', giaddr: '10.1.0.1' },
    });
    expect(decide({ mac: '52:54:00:aa:bb:cc', arch: 25 })).toMatchObject({ discovered: { arch: 'arch-25', uuid: null, giaddr: null } });
    // A UUID option that is not type 0 + 16 bytes is not kept.
    expect(decide({ mac: '52:54:00:aa:bb:cc', arch: 0, extra: [[97, [1, 2, 3]]] })).toMatchObject({ discovered: { uuid: null } });
  });

  it('does not answer, nor list an unknown MAC, while the agent is not the active boot server', () => {
    expect(decide({ arch: 0 }, 'dhcp', context({ state: { active: false, epoch: 3 } }))).toEqual({ ignored: 'not-active' });
    expect(decide({ arch: 0 }, 'dhcp', context({ state: { active: true, epoch: 0 } }))).toEqual({ ignored: 'not-active' });
    expect(decide({ mac: '52:54:00:aa:bb:cc', arch: 7 }, 'dhcp', context({ state: { active: false, epoch: 3 } }))).toEqual({ ignored: 'not-active' });
  });

  it('does not answer what is not a PXE boot request', () => {
    expect(decide({ arch: 0, vendorClass: 'MSFT 5.0' })).toEqual({ ignored: 'not-pxe' });
    // A REQUEST on 67 (the client taking its address from the real server) and a DISCOVER on 4011.
    expect(decideProxyDhcp(decodeDhcpPacket(pxeRequest({ mac: '52:54:00:00:00:01', xid: 1, messageType: 3, arch: 0 }))!, 'dhcp', context())).toEqual({
      ignored: 'not-a-boot-request',
    });
    expect(decideProxyDhcp(decodeDhcpPacket(pxeRequest({ mac: '52:54:00:00:00:01', xid: 1, messageType: 1, arch: 0 }))!, 'pxe', context())).toEqual({
      ignored: 'not-a-boot-request',
    });
    // Unsupported firmware: IA32 UEFI (6).
    expect(decide({ arch: 6 })).toEqual({ ignored: 'unsupported-arch' });
    // Option 93 of odd length.
    expect(decide({ extra: [[93, [0, 0, 7]]] })).toEqual({ ignored: 'malformed' });
  });

  it('does not answer when the boot URL would not fit option 67', () => {
    expect(decide({ arch: 0, ipxe: true }, 'dhcp', context({ httpBaseUrl: `http://boot.example/${'a'.repeat(240)}` }))).toEqual({
      ignored: 'boot-file-too-long',
    });
    // Between 128 and 255 bytes: option 67 only, `file` empty.
    const { reply, text } = answerOf(decide({ arch: 0, ipxe: true }, 'dhcp', context({ httpBaseUrl: `http://boot.example/${'a'.repeat(150)}` })));
    expect(reply.file).toBe('');
    expect(text(67)).toMatch(/\/boot\/chain\.ipxe$/);
  });
});

describe('the DHCP packet reader', () => {
  const good = pxeRequest({ mac: '52:54:00:00:00:01', xid: 7, messageType: 1, arch: 0 });

  it('reads PAD options and concatenates a repeated option (RFC 3396)', () => {
    const body = good.subarray(0, good.length - 1);
    const packet = decodeDhcpPacket(Buffer.concat([body, Buffer.from([0, 0, 250, 2, 1, 2, 0, 250, 1, 3, 255])]));
    expect([...(packet?.options.get(250) ?? [])]).toEqual([1, 2, 3]);
    expect(packet?.options.get(93)?.readUInt16BE(0)).toBe(0);
  });

  it('refuses short, oversized, non-Ethernet, cookie-less, END-less and overrunning packets', () => {
    expect(decodeDhcpPacket(good)).toBeDefined();
    expect(decodeDhcpPacket(good.subarray(0, 240))).toBeUndefined();
    expect(decodeDhcpPacket(Buffer.concat([good, Buffer.alloc(5000)]))).toBeUndefined();
    const mutate = (offset: number, value: number) => {
      const copy = Buffer.from(good);
      copy[offset] = value;
      return decodeDhcpPacket(copy);
    };
    expect(mutate(1, 6)).toBeUndefined(); // htype
    expect(mutate(2, 16)).toBeUndefined(); // hlen
    expect(mutate(0, 3)).toBeUndefined(); // op
    expect(mutate(236, 0)).toBeUndefined(); // cookie
    expect(mutate(good.length - 1, 0)).toBeUndefined(); // no END
    expect(decodeDhcpPacket(Buffer.concat([good.subarray(0, good.length - 1), Buffer.from([250, 40, 1, 255])]))).toBeUndefined();
    const broadcastMac = Buffer.from(good);
    broadcastMac.fill(0xff, 28, 34);
    expect(decodeDhcpPacket(broadcastMac)).toBeUndefined();
  });
});

describe('discovered PXE clients', () => {
  it('counts sightings, keeps only well-formed fields and drops a MAC once it has an entry', () => {
    const withEntry = new Set<string>();
    const list = new DiscoveredPxeClients((mac) => withEntry.has(mac));
    const t = Date.parse('2026-11-30T10:00:00Z');
    expect(list.record({ mac: '52:54:00:aa:00:01', uuid: 'not-a-uuid', arch: 'BAD ARCH', giaddr: '10.1.0.1' }, t)).toBe(true);
    expect(list.record({ mac: '52:54:00:aa:00:01', uuid: null, arch: 'bios', giaddr: 'x' }, t + 1000)).toBe(false);
    expect(list.list(t + 2000)).toEqual([
      {
        mac: '52:54:00:aa:00:01',
        uuid: null,
        arch: 'bios',
        giaddr: null,
        firstSeen: new Date(t).toISOString(),
        lastSeen: new Date(t + 1000).toISOString(),
        count: 2,
      },
    ]);
    expect(list.record({ mac: 'garbage', uuid: null, arch: 'bios', giaddr: null }, t)).toBe(false);
    withEntry.add('52:54:00:aa:00:01');
    expect(list.list(t + 3000)).toEqual([]);
  });

  it(`keeps at most ${MAX_DISCOVERED_CLIENTS}, the most recently seen, each for a day`, () => {
    const list = new DiscoveredPxeClients(() => false);
    const t = Date.parse('2026-11-30T10:00:00Z');
    for (let i = 0; i < 1000; i += 1) {
      list.record(
        { mac: `52:54:00:bb:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`, uuid: null, arch: 'bios', giaddr: null },
        t + i,
      );
    }
    const all = list.list(t + 1000);
    expect(all).toHaveLength(MAX_DISCOVERED_CLIENTS);
    expect(all[0]?.mac).toBe('52:54:00:bb:02:e8'); // 744 = 1000 - 256
    expect(list.list(t + 999 + 24 * 3_600_000)).toEqual([]);
  });
});
