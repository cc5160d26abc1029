// TFTP on the wire for tests: request packets, malformed ones made from a seed, and a UDP
// client socket that collects what comes back.
import dgram from 'node:dgram';

export function requestPacket(opcode: 1 | 2, filename: string, mode: string, options: Record<string, string> = {}): Buffer {
  const fields = [filename, mode, ...Object.entries(options).flat()];
  return Buffer.concat([Buffer.from([0, opcode]), ...fields.map((f) => Buffer.from(`${f}\0`, 'latin1'))]);
}

export function ackPacket(block: number): Buffer {
  const ack = Buffer.alloc(4);
  ack.writeUInt16BE(4, 0);
  ack.writeUInt16BE(block & 0xffff, 2);
  return ack;
}

/** mulberry32: a small seeded PRNG, so a failing fuzz case can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const printable = (random: () => number, length: number) => Array.from({ length }, () => String.fromCharCode(0x21 + Math.floor(random() * 94))).join('');

/**
 * Datagrams that are not a well-formed request, each malformed by construction (the kind
 * cycles): other opcodes, too short or too long, unterminated, bytes outside printable ASCII,
 * an empty string, an unknown mode, an option without a value, oversized or repeated options.
 */
export function malformedPacket(random: () => number, n: number): Buffer {
  const int = (max: number) => Math.floor(random() * max);
  const bytes = (length: number) => Buffer.from(Array.from({ length }, () => int(256)));
  const opcode = (1 + int(2)) as 1 | 2;
  const valid = () =>
    requestPacket(
      opcode,
      printable(random, 1 + int(40)),
      ['octet', 'netascii', 'OCTET'][int(3)] as string,
      random() < 0.5 ? { blksize: String(int(70_000)), tsize: '0' } : {},
    );
  switch (n % 11) {
    case 0: {
      const packet = bytes(int(600));
      if (packet.length >= 2) packet.writeUInt16BE([0, 3, 4, 5, 6, 7, 0xffff][int(7)] as number, 0);
      return packet;
    }
    case 1:
      return Buffer.concat([Buffer.from([0, opcode]), bytes(int(7))]);
    case 2:
      return Buffer.concat([valid(), Buffer.alloc(513)]);
    case 3: {
      const packet = valid().subarray(0, 2 + int(30));
      return packet[packet.length - 1] === 0 ? Buffer.concat([packet, Buffer.from('x')]) : packet;
    }
    case 4: {
      const packet = Buffer.from(valid());
      const bad = [int(0x21), 0x7f + int(0x81)][int(2)] as number;
      packet[2 + int(packet.length - 3)] = bad === 0 ? 1 : bad;
      return packet;
    }
    case 5:
      return requestPacket(opcode, '', 'octet');
    case 6:
      return requestPacket(opcode, printable(random, 8), printable(random, 1 + int(10)).replace(/^(octet|netascii|mail)$/i, 'x$1'));
    case 7:
      return Buffer.concat([valid(), Buffer.from(`${printable(random, 1 + int(8))}\0`, 'latin1')]);
    case 8:
      return requestPacket(opcode, 'undionly.kpxe', 'octet', { [printable(random, 33 + int(20))]: '1' });
    case 9:
      return requestPacket(opcode, 'undionly.kpxe', 'octet', { blksize: '1468', tsize: '0', BLKSIZE: '512' });
    default:
      return requestPacket(opcode, printable(random, 256 + int(100)), 'octet');
  }
}

/** A UDP socket on 127.0.0.1 (or another loopback address) that keeps what it receives. */
export async function tftpClient(address = '127.0.0.1'): Promise<{
  socket: dgram.Socket;
  received: { packet: Buffer; port: number }[];
  next(timeoutMs?: number): Promise<{ packet: Buffer; port: number } | null>;
  close(): void;
}> {
  const socket = dgram.createSocket('udp4');
  const received: { packet: Buffer; port: number }[] = [];
  let waiter: (() => void) | null = null;
  let read = 0;
  socket.on('message', (packet, peer) => {
    received.push({ packet, port: peer.port });
    waiter?.();
  });
  await new Promise<void>((resolve) => socket.bind(0, address, () => resolve()));
  return {
    socket,
    received,
    async next(timeoutMs = 2_000) {
      if (read >= received.length) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          waiter = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        waiter = null;
      }
      return read < received.length ? (received[read++] as { packet: Buffer; port: number }) : null;
    },
    close: () => socket.close(),
  };
}
