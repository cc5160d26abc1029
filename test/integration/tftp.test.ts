// The boot server's TFTP (agent/boot/tftp) on real UDP sockets on loopback, serving Debian's
// iPXE builds from /usr/lib/ipxe: byte-identical octet reads by curl and by a raw client,
// blksize and tsize negotiated with an OACK from the transfer's own port, writes, other modes
// and names outside the root refused with an ERROR, the 5th transfer from one address and the
// 65th overall dropped unanswered, nothing served while the agent does not hold the boot
// lease (and a transfer stops when it loses it), garbage dropped unanswered, and a silent
// client given up on after bounded retransmissions. Last, the site agent itself: TFTP started
// from its [boot] section serves while it holds the lease, a standby's stays silent.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, inject } from 'vitest';
import { Opcode } from '../../agent/boot/tftp/packet';
import { startTftpServer, type TftpServer, type TftpServerOptions } from '../../agent/boot/tftp/server';
import { AgentLog } from '../../agent/common/log';
import { activeAgent, startBootSite, until as untilAsync } from '../helpers/boot-site';
import { freePort } from '../helpers/ports';
import { siteAgentFixture } from '../helpers/site-agent';
import { ackPacket, malformedPacket, requestPacket, seededRandom, tftpClient } from '../helpers/tftp';

const run = promisify(execFile);
const ROOT = '/usr/lib/ipxe';
const QUIET_MS = 400;
/** How long an answer that is expected may take on a loaded machine. */
const ANSWER_WAIT_MS = 5_000;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/undionly.kpxe`) || !existsSync(`${ROOT}/snponly.efi`))
    throw new Error('the iPXE builds are missing: apt-get install -y ipxe (or bash scripts/test-deps.sh)');
  await run('curl', ['--version']).catch(() => {
    throw new Error('curl is missing: apt-get install -y curl (or bash scripts/test-deps.sh)');
  });
});

const servers: TftpServer[] = [];
const clients: { close(): void }[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) await server.close();
});

async function server(overrides: Partial<TftpServerOptions> = {}): Promise<TftpServer> {
  const started = await startTftpServer({
    address: '127.0.0.1',
    port: 0,
    root: ROOT,
    state: () => ({ active: true }),
    log: new AgentLog(() => undefined),
    ...overrides,
  });
  servers.push(started);
  return started;
}

async function client(address = '127.0.0.1') {
  const c = await tftpClient(address);
  clients.push(c);
  return c;
}

const opcodeOf = (packet: Buffer) => packet.readUInt16BE(0);
const errorOf = (packet: Buffer) => ({ opcode: opcodeOf(packet), code: packet.readUInt16BE(2), message: packet.toString('latin1', 4, packet.length - 1) });
function oackOf(packet: Buffer): Record<string, string> {
  const fields = packet.toString('latin1', 2, packet.length - 1).split('\0');
  return Object.fromEntries(fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i], fields[i + 1]]] : [])));
}

async function until(what: string, check: () => boolean, debug?: () => string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}${debug ? ` ${debug()}` : ''}`);
}

describe('TFTP reads', () => {
  it('serves the iPXE builds byte-identical to curl, at blksize 1468 and at the default 512', async () => {
    const { port } = await server();
    const dir = mkdtempSync(path.join(inject('runDir'), 'tftp-read-'));
    for (const [name, blksize] of [
      ['undionly.kpxe', '1468'],
      ['snponly.efi', '512'],
    ] as const) {
      await run('curl', ['-sS', '--tftp-blksize', blksize, '-o', path.join(dir, name), `tftp://127.0.0.1:${port}/${name}`]);
      expect(readFileSync(path.join(dir, name)).equals(readFileSync(path.join(ROOT, name))), name).toBe(true);
    }
  });

  it('negotiates blksize 1468 and tsize in an OACK from the transfer port, then sends 1468-byte blocks', async () => {
    const tftp = await server();
    const c = await client();
    c.socket.send(requestPacket(1, 'undionly.kpxe', 'octet', { blksize: '1468', tsize: '0' }), tftp.port, '127.0.0.1');
    const oack = await c.next();
    expect(oack && opcodeOf(oack.packet)).toBe(Opcode.OACK);
    expect(oackOf(oack!.packet)).toEqual({ blksize: '1468', tsize: String(readFileSync(`${ROOT}/undionly.kpxe`).length) });
    expect(oack!.port).not.toBe(tftp.port);
    const chunks: Buffer[] = [];
    let block = 0;
    for (;;) {
      c.socket.send(ackPacket(block), oack!.port, '127.0.0.1');
      const data = await c.next();
      if (!data) throw new Error(`no DATA after ACK ${block}`);
      expect(opcodeOf(data.packet)).toBe(Opcode.DATA);
      expect(data.packet.readUInt16BE(2)).toBe(block + 1);
      block += 1;
      chunks.push(data.packet.subarray(4));
      if (data.packet.length - 4 < 1468) break;
      expect(data.packet.length).toBe(4 + 1468);
    }
    c.socket.send(ackPacket(block), oack!.port, '127.0.0.1');
    expect(Buffer.concat(chunks).equals(readFileSync(`${ROOT}/undionly.kpxe`))).toBe(true);
    await until('the transfer to end', () => tftp.stats().transfers === 0);
    expect(tftp.stats().served).toBe(1);
  });
});

describe('TFTP refusals', () => {
  it('answers writes, netascii and mail, names outside the root and missing files with an ERROR', async () => {
    const tftp = await server();
    const cases: [Buffer, number][] = [
      [requestPacket(2, 'undionly.kpxe', 'octet'), 2],
      [requestPacket(1, 'undionly.kpxe', 'netascii'), 4],
      [requestPacket(1, 'undionly.kpxe', 'mail'), 4],
      [requestPacket(1, '../../etc/passwd', 'octet'), 2],
      [requestPacket(1, '/etc/passwd', 'octet'), 2],
      [requestPacket(1, '/usr/lib/ipxe/undionly.kpxe', 'octet'), 2],
      // Debian's ipxe.efi is a symlink to /boot/ipxe.efi: out of the root, so not served.
      [requestPacket(1, 'ipxe.efi', 'octet'), 2],
      [requestPacket(1, 'no-such-file.efi', 'octet'), 1],
    ];
    for (const [request, code] of cases) {
      const c = await client();
      c.socket.send(request, tftp.port, '127.0.0.1');
      const reply = await c.next();
      expect(reply && errorOf(reply.packet), request.toString('latin1')).toMatchObject({ opcode: Opcode.ERROR, code });
    }
    expect(tftp.stats()).toMatchObject({ transfers: 0, sources: 0, refused: cases.length });
  });
});

describe('TFTP start', () => {
  it('a port already taken stops the start with an error naming the port and the fix', async () => {
    const first = await server();
    await expect(server({ port: first.port })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      details: { path: 'boot.tftp', port: first.port, code: 'EADDRINUSE' },
    });
    await expect(server({ port: first.port })).rejects.toThrow(`TFTP cannot listen on UDP port ${first.port} (127.0.0.1): the port is in use`);
  });
});

describe('TFTP bounds', () => {
  /**
   * Whether a read request from `address` is answered within `waitMs`: a loaded machine's while
   * an answer is expected (a busy CI run took more than QUIET_MS), the quiet window while none is.
   */
  async function startTransfer(address: string, port: number, waitMs: number): Promise<boolean> {
    const c = await client(address);
    c.socket.send(requestPacket(1, 'snponly.efi', 'octet', { blksize: '1468' }), port, '127.0.0.1');
    return (await c.next(waitMs)) !== null;
  }

  it('runs 4 transfers per source address and 64 in all; beyond either, a request is dropped unanswered', async () => {
    const tftp = await server();
    for (let i = 0; i < 4; i++) expect(await startTransfer('127.0.0.1', tftp.port, ANSWER_WAIT_MS)).toBe(true);
    expect(await startTransfer('127.0.0.1', tftp.port, QUIET_MS)).toBe(false); // the 5th from 127.0.0.1
    for (let host = 2; host <= 16; host++) {
      for (let i = 0; i < 4; i++) expect(await startTransfer(`127.0.0.${host}`, tftp.port, ANSWER_WAIT_MS)).toBe(true);
    }
    expect(tftp.stats()).toMatchObject({ transfers: 64, sources: 16 });
    expect(await startTransfer('127.0.0.99', tftp.port, QUIET_MS)).toBe(false); // the 65th
    expect(tftp.stats()).toMatchObject({ transfers: 64, dropped: 2, refused: 0 });
  });

  it('frees a slot when a client ends its transfer with an ERROR', async () => {
    const tftp = await server({ limits: { maxTransfersPerSource: 1 } });
    const c = await client();
    c.socket.send(requestPacket(1, 'snponly.efi', 'octet'), tftp.port, '127.0.0.1');
    const first = await c.next();
    expect(await startTransfer('127.0.0.1', tftp.port, QUIET_MS)).toBe(false);
    c.socket.send(Buffer.from('\0\x05\0\x00stop\0', 'latin1'), first!.port, '127.0.0.1');
    await until('the slot to be freed', () => tftp.stats().transfers === 0);
    expect(await startTransfer('127.0.0.1', tftp.port, ANSWER_WAIT_MS)).toBe(true);
  });

  it('retransmits to a silent client a bounded number of times, then gives up', async () => {
    const tftp = await server({ timing: { retransmitMs: 50, maxRetransmits: 3 } });
    const c = await client();
    c.socket.send(requestPacket(1, 'snponly.efi', 'octet'), tftp.port, '127.0.0.1');
    await until('the transfer to be given up', () => tftp.stats().transfers === 0 && c.received.length > 0);
    await new Promise((r) => setTimeout(r, QUIET_MS));
    expect(c.received.length).toBe(1 + 3);
    expect(c.received.every(({ packet }) => packet.readUInt16BE(2) === 1)).toBe(true);
  });

  it('drops 10,000 malformed datagrams unanswered and keeps no state for them', async () => {
    const tftp = await server();
    const c = await client();
    const random = seededRandom(7);
    let count = 0;
    for (let n = 0; n < 10_000; n++) {
      c.socket.send(malformedPacket(random, n), tftp.port, '127.0.0.1');
      count += 1;
      // In batches the socket's receive buffer holds, so the kernel drops none before the server reads them.
      if (n % 50 === 49)
        await until(
          'the server to read the batch',
          () => tftp.stats().dropped === count,
          () => JSON.stringify({ count, ...tftp.stats() }),
        );
    }
    await until(
      'every datagram to be read',
      () => tftp.stats().dropped === count,
      () => JSON.stringify({ count, ...tftp.stats() }),
    );
    await new Promise((r) => setTimeout(r, QUIET_MS));
    expect(c.received).toEqual([]);
    expect(tftp.stats()).toEqual({ transfers: 0, sources: 0, served: 0, refused: 0, dropped: count });
    expect(await startTransfer('127.0.0.1', tftp.port, ANSWER_WAIT_MS)).toBe(true);
  });
});

describe('TFTP and the boot lease', () => {
  it('serves nothing while the agent is not active, and stops a transfer when it loses the lease', async () => {
    let active = false;
    const tftp = await server({ state: () => ({ active }) });
    const c = await client();
    c.socket.send(requestPacket(1, 'undionly.kpxe', 'octet', { blksize: '1468', tsize: '0' }), tftp.port, '127.0.0.1');
    expect(await c.next(QUIET_MS)).toBeNull();
    expect(tftp.stats()).toMatchObject({ transfers: 0, dropped: 1 });

    active = true;
    c.socket.send(requestPacket(1, 'undionly.kpxe', 'octet', { blksize: '1468' }), tftp.port, '127.0.0.1');
    const oack = await c.next();
    expect(oack && opcodeOf(oack.packet)).toBe(Opcode.OACK);
    c.socket.send(ackPacket(0), oack!.port, '127.0.0.1');
    expect((await c.next())?.packet.readUInt16BE(2)).toBe(1);
    active = false;
    c.socket.send(ackPacket(1), oack!.port, '127.0.0.1');
    await until('the transfer to stop', () => tftp.stats().transfers === 0);
    expect(await c.next(QUIET_MS)).toBeNull();
  });
});

describe('TFTP in the site agent', () => {
  it('starts from [boot] tftp on server_ip, serves while the agent holds the boot lease, and a standby stays silent', async () => {
    const site = await startBootSite('tftp-site');
    const [activePort, standbyPort] = [await freePort(), await freePort()];
    const withTftp = (port: number) =>
      siteAgentFixture(site.t.cp.url, { boot: ['tftp = true', 'server_ip = "127.0.0.1"', `tftp_port = ${port}`, `tftp_root = "${ROOT}"`] });
    const active = await withTftp(activePort).start({ IRONFLOW_JOIN_TOKEN: site.siteToken });
    try {
      await activeAgent(active);
      const standbyFixture = withTftp(standbyPort);
      const standby = await standbyFixture.start({ IRONFLOW_JOIN_TOKEN: site.siteToken });
      try {
        await untilAsync('the standby to see the lease held by the other agent', () => standby.session.state().holderNodeId === active.identity.current.nodeId);
        const dir = mkdtempSync(path.join(inject('runDir'), 'tftp-agent-'));
        await run('curl', ['-sS', '--tftp-blksize', '1468', '-o', path.join(dir, 'undionly.kpxe'), `tftp://127.0.0.1:${activePort}/undionly.kpxe`]);
        expect(readFileSync(path.join(dir, 'undionly.kpxe')).equals(readFileSync(`${ROOT}/undionly.kpxe`))).toBe(true);
        const c = await client();
        c.socket.send(requestPacket(1, 'undionly.kpxe', 'octet'), standbyPort, '127.0.0.1');
        expect(await c.next(QUIET_MS)).toBeNull();
        // Silent because it is a standby, not because it does not listen.
        expect(standbyFixture.lines.some((line) => line.includes('"tftp listening"') && line.includes(`"port":${standbyPort}`))).toBe(true);
      } finally {
        await standby.stop();
      }
    } finally {
      await active.stop();
      await site.t.close();
    }
    // Stopped with the agent: nothing listens on its port any more.
    const c = await client();
    c.socket.send(requestPacket(1, 'undionly.kpxe', 'octet'), activePort, '127.0.0.1');
    expect(await c.next(QUIET_MS)).toBeNull();
  }, 90_000);
});
