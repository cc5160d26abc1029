// The site agent's proxy DHCP server on real UDP sockets, inside network namespaces on one
// bridge: the server (a child process, test/fixtures/proxy-dhcp-server.ts), a PXE client and a
// bystander (test/fixtures/proxy-dhcp-client.ts). The client sends DISCOVERs and REQUESTs the
// way PXE firmware does; answers are checked byte by byte. A client without an address gets
// a broadcast (the bystander hears it too), a relayed request goes back to the relay, a
// REQUEST on 4011 is answered where it came from. An unknown MAC gets nothing and is listed;
// a port already taken or not permitted stops the server's start with what to do.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootEntry } from '../../core/boot/boot-entry';
import { decodeDhcpPacket } from '../../agent/boot/dhcp/packet';
import { createTestNetwork, type NetworkHost, type TestNetwork } from '../helpers/netns';
import { spawnLineChild, type LineChild } from '../helpers/proxy-dhcp-net';
import { pxeRequest, type PxeRequestSpec } from '../helpers/pxe-request';

const SUBNET = '10.77.67';
const SERVER_IP = `${SUBNET}.2`;
const CLIENT_IP = `${SUBNET}.50`;
const HTTP_BASE = `http://${SERVER_IP}:8081`;
const UUID = '4c4c4544-0042-3510-8052-b4c04f4e3732';
const SERVER_FIXTURE = 'test/fixtures/proxy-dhcp-server.ts';
const CLIENT_FIXTURE = 'test/fixtures/proxy-dhcp-client.ts';

const entry = (mac: string, arch: BootEntry['arch']): BootEntry => ({
  mac,
  productUuid: UUID,
  arch,
  nodeId: 'node_1',
  workflowId: 'wf_1',
  tokenRef: 'sec_abc',
  notAfter: new Date(Date.now() + 3_600_000).toISOString(),
});

let network: TestNetwork;
let agent: NetworkHost;
let client: LineChild;
let bystander: LineChild;
let server: LineChild;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'proxy-dhcp-it-'));
let nextId = 1;

function serverArgs(over: Record<string, unknown> = {}): string[] {
  return [
    SERVER_FIXTURE,
    JSON.stringify({
      dataDir,
      serverIp: SERVER_IP,
      active: true,
      httpBaseUrl: HTTP_BASE,
      entries: [entry('52:54:00:67:00:01', 'BIOS'), entry('52:54:00:67:00:02', 'X86_64_EFI')],
      ...over,
    }),
  ];
}

beforeAll(async () => {
  network = createTestNetwork('pdhcp', SUBNET);
  agent = network.addHost('agent', 2);
  const clientHost = network.addHost('client', 50);
  const bystanderHost = network.addHost('bystander', 60);
  server = spawnLineChild(network, agent.ns, serverArgs());
  client = spawnLineChild(network, clientHost.ns, [CLIENT_FIXTURE]);
  bystander = spawnLineChild(network, bystanderHost.ns, [CLIENT_FIXTURE]);
  await Promise.all([server.nextLine((l) => l === 'ready'), client.nextLine((l) => l === 'ready'), bystander.nextLine((l) => l === 'ready')]);
}, 60_000);

afterAll(async () => {
  await network?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

type Heard = { address: string; port: number; hex: string };

/** Sends from the client's socket on `from` and answers what that socket heard within waitMs. */
async function exchange(
  request: Partial<PxeRequestSpec> & { mac: string },
  route: { to: string; port: number; from?: number; waitMs?: number },
  via = client,
): Promise<Heard[]> {
  const id = nextId++;
  const packet = pxeRequest({ xid: 0x5000 + id, messageType: route.port === 4011 ? 3 : 1, ...request });
  via.send(JSON.stringify({ id, packet: packet.toString('hex'), to: route.to, port: route.port, from: route.from ?? 68, waitMs: route.waitMs ?? 700 }));
  const line = await via.nextLine((l) => l.startsWith(`{"id":${id},`));
  return (JSON.parse(line) as { replies: Heard[] }).replies;
}

const hex = (text: string) => Buffer.from(text, 'latin1').toString('hex');
const ipHex = (ip: string) => Buffer.from(ip.split('.').map(Number)).toString('hex');

describe('proxy DHCP on real sockets', () => {
  it('answers a BIOS PXE DISCOVER with a broadcast OFFER naming undionly.kpxe, byte for byte', async () => {
    const replies = await exchange({ mac: '52:54:00:67:00:01', arch: 0, uuid: UUID }, { to: '255.255.255.255', port: 67 });
    expect(replies).toHaveLength(1);
    const [reply] = replies as [Heard];
    expect(reply).toMatchObject({ address: SERVER_IP, port: 67 });
    const bytes = Buffer.from(reply.hex, 'hex');
    // BOOTP header: op 2, Ethernet, xid echoed, broadcast flag, yiaddr 0, siaddr = server_ip.
    expect(bytes.subarray(0, 4).toString('hex')).toBe('02010600');
    const decoded = decodeDhcpPacket(bytes)!;
    expect(decoded).toMatchObject({
      op: 2,
      mac: '52:54:00:67:00:01',
      ciaddr: '0.0.0.0',
      yiaddr: '0.0.0.0',
      siaddr: SERVER_IP,
      giaddr: '0.0.0.0',
      file: 'undionly.kpxe',
      sname: '',
    });
    expect(decoded.flags).toBe(0x8000);
    // The options, in order, then END.
    const options = [
      `2b0a060108` + `0a0400${hex('PXE')}` + 'ff', // 43: PXE_DISCOVERY_CONTROL = 8 (boot the file named here), a prompt of timeout 0 as dnsmasq sends
      `350102`, // 53: OFFER
      `3604${ipHex(SERVER_IP)}`, // 54: server identifier
      `3c09${hex('PXEClient')}`, // 60
      `420a${hex(SERVER_IP)}`, // 66: TFTP server
      `430d${hex('undionly.kpxe')}`, // 67: boot file
      `6111${'00'}${UUID.replaceAll('-', '')}`, // 97: the client's UUID echoed
      'ff',
    ].join('');
    expect(bytes.subarray(236, 240).toString('hex')).toBe('63825363');
    expect(bytes.subarray(240, 240 + options.length / 2).toString('hex')).toBe(options);
    expect(bytes.length).toBe(240 + options.length / 2); // past BOOTP's 300-byte minimum already
  });

  it('broadcasts it: a bystander on the bridge hears the OFFER too', async () => {
    const id = nextId++;
    // The bystander listens on 68 while the client asks.
    bystander.send(JSON.stringify({ id, packet: '00', to: '127.0.0.1', port: 9, from: 68, waitMs: 1200 }));
    await new Promise((r) => setTimeout(r, 100));
    await exchange({ mac: '52:54:00:67:00:01', arch: 0 }, { to: '255.255.255.255', port: 67 });
    const heard = (JSON.parse(await bystander.nextLine((l) => l.startsWith(`{"id":${id},`))) as { replies: Heard[] }).replies;
    expect(heard.map((h) => decodeDhcpPacket(Buffer.from(h.hex, 'hex'))?.mac)).toEqual(['52:54:00:67:00:01']);
  });

  it('answers the x86-64 UEFI REQUEST on 4011 (OVMF, iPXE) with an ACK back to its source', async () => {
    const offer = await exchange({ mac: '52:54:00:67:00:02', arch: 7 }, { to: '255.255.255.255', port: 67 });
    expect(decodeDhcpPacket(Buffer.from(offer[0]!.hex, 'hex'))?.file).toBe('snponly.efi');
    const ack = await exchange({ mac: '52:54:00:67:00:02', arch: 7, ciaddr: CLIENT_IP, flags: 0 }, { to: SERVER_IP, port: 4011 });
    expect(ack).toHaveLength(1);
    expect(ack[0]).toMatchObject({ address: SERVER_IP, port: 4011 });
    const decoded = decodeDhcpPacket(Buffer.from(ack[0]!.hex, 'hex'))!;
    expect(decoded).toMatchObject({ ciaddr: CLIENT_IP, yiaddr: '0.0.0.0', siaddr: SERVER_IP, file: 'snponly.efi', flags: 0 });
    expect([...decoded.options.get(53)!]).toEqual([5]);
  });

  it('gives iPXE chain.ipxe and an HTTP-boot client the EFI build by URL', async () => {
    const ipxe = await exchange({ mac: '52:54:00:67:00:02', arch: 7, ipxe: true }, { to: '255.255.255.255', port: 67 });
    expect(decodeDhcpPacket(Buffer.from(ipxe[0]!.hex, 'hex'))?.file).toBe(`${HTTP_BASE}/boot/chain.ipxe`);
    const http = await exchange({ mac: '52:54:00:67:00:02', arch: 16, vendorClass: 'HTTPClient' }, { to: '255.255.255.255', port: 67 });
    const decoded = decodeDhcpPacket(Buffer.from(http[0]!.hex, 'hex'))!;
    expect(decoded.file).toBe(`${HTTP_BASE}/boot/files/snponly.efi`);
    expect(decoded.options.get(60)?.toString()).toBe('HTTPClient');
  });

  it('answers a relayed DISCOVER to the relay (giaddr:67)', async () => {
    const replies = await exchange({ mac: '52:54:00:67:00:01', arch: 0, giaddr: CLIENT_IP }, { to: SERVER_IP, port: 67, from: 67 });
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ address: SERVER_IP, port: 67 });
    expect(decodeDhcpPacket(Buffer.from(replies[0]!.hex, 'hex'))).toMatchObject({ giaddr: CLIENT_IP, file: 'undionly.kpxe' });
  });

  it('does not answer an unknown MAC or a non-PXE client, and lists the unknown PXE MAC', async () => {
    expect(await exchange({ mac: '52:54:00:67:99:01', arch: 7, uuid: UUID }, { to: '255.255.255.255', port: 67, waitMs: 1000 })).toEqual([]);
    expect(await exchange({ mac: '52:54:00:67:00:01', arch: 0, vendorClass: 'MSFT 5.0' }, { to: '255.255.255.255', port: 67, waitMs: 1000 })).toEqual([]);
    server.send('list');
    const listed = JSON.parse(await server.nextLine((l) => l.startsWith('['))) as Array<Record<string, unknown>>;
    expect(listed).toEqual([
      { mac: '52:54:00:67:99:01', uuid: UUID, arch: 'x86_64_efi', giaddr: null, firstSeen: expect.any(String), lastSeen: expect.any(String), count: 1 },
    ]);
  });

  it('fails to start with what to do when port 67 is taken', async () => {
    const second = spawnLineChild(network, agent.ns, serverArgs());
    const code = await new Promise<number | null>((resolve) => second.child.once('exit', resolve));
    expect(code).toBe(2);
    expect(second.stderr()).toMatch(/proxy DHCP cannot listen on UDP port 67 .*in use by another process.*proxy_dhcp = false in \[boot\]/);
  });

  it('fails to start with what to do when it may not bind port 67 (not root)', async () => {
    const host = network.addHost('unpriv', 3);
    const unprivDir = mkdtempSync(path.join(os.tmpdir(), 'proxy-dhcp-unpriv-'));
    chmodSync(unprivDir, 0o777);
    // setpriv: drop to nobody inside the namespace (ports below 1024 need CAP_NET_BIND_SERVICE).
    const child = network.spawnIn(
      host.ns,
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', 'tsx', ...serverArgs({ serverIp: `${SUBNET}.3`, dataDir: unprivDir })],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        cwd: process.cwd(),
      },
    );
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    rmSync(unprivDir, { recursive: true, force: true });
    expect({ code, stderr }).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/UDP port 67 .*permission denied; run the agent as root or give it CAP_NET_BIND_SERVICE/),
    });
  });
});
