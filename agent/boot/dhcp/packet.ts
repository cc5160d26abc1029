// DHCP packets (RFC 2131) in and out of proxy DHCP. Reading is ours and strict, because the
// packets come from an untrusted network: an Ethernet client, the magic cookie, every
// option inside the packet, an END option, at most MAX_PACKET_BYTES; anything else is
// undefined (no answer). The `dhcp` package's reader is not used: it skips a byte after
// each PAD option, logs every option it does not know on stderr (a flood on demand) and
// throws on non-Ethernet clients. Writing goes through its writer (lib/protocol.js format).
import protocol, { type DhcpLibOptionValue } from 'dhcp/lib/protocol.js';
import { normalizeMac } from '../../../core/mac';
import { DhcpOption } from './options';

/** Larger than any DHCP packet a PXE client sends (they stay under 576 or the MTU). */
export const MAX_PACKET_BYTES = 4096;
/** BOOTP's minimum (RFC 1542): relays and old PXE ROMs drop shorter replies. */
const MIN_REPLY_BYTES = 300;
const HEADER_BYTES = 236;
const MAGIC_COOKIE = 0x63825363;
const OPTION_PAD = 0;
const OPTION_END = 255;

export interface DhcpPacket {
  op: number;
  xid: number;
  secs: number;
  flags: number;
  ciaddr: string;
  yiaddr: string;
  siaddr: string;
  giaddr: string;
  /** chaddr, normalized (aa:bb:cc:dd:ee:ff). */
  mac: string;
  sname: string;
  file: string;
  /** Each option's bytes; an option sent more than once is concatenated (RFC 3396). */
  options: ReadonlyMap<number, Buffer>;
}

const ip = (buffer: Buffer, offset: number) => `${buffer[offset]}.${buffer[offset + 1]}.${buffer[offset + 2]}.${buffer[offset + 3]}`;

/** A NUL-terminated field (sname, file); latin1 so that every byte maps to one character. */
function cString(buffer: Buffer, start: number, length: number): string {
  const field = buffer.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.toString('latin1', 0, end === -1 ? length : end);
}

function readOptions(buffer: Buffer, start: number): Map<number, Buffer> | undefined {
  const parts = new Map<number, Buffer[]>();
  let at = start;
  while (at < buffer.length) {
    const code = buffer[at] as number;
    if (code === OPTION_END) {
      const options = new Map<number, Buffer>();
      for (const [key, chunks] of parts) options.set(key, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
      return options;
    }
    if (code === OPTION_PAD) {
      at += 1;
      continue;
    }
    if (at + 1 >= buffer.length) return undefined;
    const length = buffer[at + 1] as number;
    const valueEnd = at + 2 + length;
    if (valueEnd > buffer.length) return undefined;
    const chunk = buffer.subarray(at + 2, valueEnd);
    const existing = parts.get(code);
    if (existing) existing.push(chunk);
    else parts.set(code, [chunk]);
    at = valueEnd;
  }
  return undefined; // no END option
}

/** The packet, or undefined when it is not a well-formed Ethernet DHCP packet. */
export function decodeDhcpPacket(buffer: Buffer): DhcpPacket | undefined {
  if (buffer.length < HEADER_BYTES + 5 || buffer.length > MAX_PACKET_BYTES) return undefined;
  const op = buffer.readUInt8(0);
  if ((op !== 1 && op !== 2) || buffer.readUInt8(1) !== 1 || buffer.readUInt8(2) !== 6) return undefined;
  if (buffer.readUInt32BE(HEADER_BYTES) !== MAGIC_COOKIE) return undefined;
  const mac = normalizeMac(buffer.toString('hex', 28, 34));
  if (!mac) return undefined;
  const options = readOptions(buffer, HEADER_BYTES + 4);
  if (!options) return undefined;
  return {
    op,
    xid: buffer.readUInt32BE(4),
    secs: buffer.readUInt16BE(8),
    flags: buffer.readUInt16BE(10),
    ciaddr: ip(buffer, 12),
    yiaddr: ip(buffer, 16),
    siaddr: ip(buffer, 20),
    giaddr: ip(buffer, 24),
    mac,
    sname: cString(buffer, 44, 64),
    file: cString(buffer, 108, 128),
    options,
  };
}

/** The DHCP message type (option 53), or undefined. */
export function messageTypeOf(packet: DhcpPacket): number | undefined {
  const value = packet.options.get(DhcpOption.messageType);
  return value?.length === 1 ? value[0] : undefined;
}

/** A reply has a request's fields but op, secs and sname (the writer fills those), and typed option values. `file` holds up to 127 bytes of ASCII; longer names go in option 67 only. */
export type DhcpReply = Omit<DhcpPacket, 'op' | 'secs' | 'sname' | 'options'> & { options: Record<number, DhcpLibOptionValue> };

export function encodeDhcpReply(reply: DhcpReply): Buffer {
  const written = protocol.format({ op: 2, htype: 1, hlen: 6, hops: 0, secs: 0, sname: '', ...reply, chaddr: reply.mac });
  // The writer's buffer is 1,500 zeroed bytes: the padding to 300 is already there.
  return written._data.subarray(0, Math.max(written._w, MIN_REPLY_BYTES));
}
