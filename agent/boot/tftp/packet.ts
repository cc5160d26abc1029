// TFTP packets (RFC 1350) with option negotiation (RFC 2347 OACK, 2348 blksize, 2349 tsize).
// Parsing is bounded and total: anything that is not exactly a well-formed packet of the
// kind expected is null, never an exception, so the server can drop it unanswered.
//
// We do not use the npm `tftp` package's parsers: they throw on malformed input (which its
// server then answers with an ERROR packet), accept unbounded strings and WRQ/netascii, and
// its server has no concurrency caps or lease gate; see server.ts.

export const Opcode = { RRQ: 1, WRQ: 2, DATA: 3, ACK: 4, ERROR: 5, OACK: 6 } as const;

export const TftpError = { NOT_DEFINED: 0, FILE_NOT_FOUND: 1, ACCESS_VIOLATION: 2, ILLEGAL_OPERATION: 4, OPTION_REFUSED: 8 } as const;
export type TftpErrorCode = (typeof TftpError)[keyof typeof TftpError];

/** RFC 2347: a request with its options fits in 512 bytes. */
const MAX_REQUEST_BYTES = 512;
const MIN_BLOCK_SIZE = 8;
export const MAX_BLOCK_SIZE = 65_464;
const MAX_FILENAME_BYTES = 255;
const MAX_OPTION_BYTES = 32;
const MAX_OPTIONS = 16;

type TransferMode = 'octet' | 'netascii' | 'mail';

interface TftpRequest {
  kind: 'read' | 'write';
  filename: string;
  mode: TransferMode;
  /** Options we negotiate, only when their values are valid (an invalid one is ignored, as RFC 2347 allows). */
  options: { blksize?: number; tsize?: boolean };
}

type ClientReply = { kind: 'ack'; block: number } | { kind: 'error'; code: number };

/** The NUL-terminated printable-ASCII strings of buf from offset, or null if any is malformed. */
function readStrings(buf: Buffer, offset: number, maxCount: number): string[] | null {
  const strings: string[] = [];
  let start = offset;
  for (let i = offset; i < buf.length; i++) {
    const byte = buf[i] as number;
    if (byte === 0) {
      if (i === start || strings.length === maxCount) return null;
      strings.push(buf.toString('latin1', start, i));
      start = i + 1;
    } else if (byte < 0x21 || byte > 0x7e) {
      return null;
    }
  }
  return start === buf.length ? strings : null; // the last string must be terminated
}

const decimal = (text: string, maxDigits: number): number | null => (text.length <= maxDigits && /^[0-9]+$/.test(text) ? Number(text) : null);

export function parseRequest(buf: Buffer): TftpRequest | null {
  if (buf.length < 6 || buf.length > MAX_REQUEST_BYTES) return null;
  const opcode = buf.readUInt16BE(0);
  if (opcode !== Opcode.RRQ && opcode !== Opcode.WRQ) return null;
  const strings = readStrings(buf, 2, 2 + 2 * MAX_OPTIONS);
  if (!strings || strings.length < 2 || strings.length % 2 !== 0) return null;
  const [filename, modeText] = strings as [string, string];
  const mode = modeText.toLowerCase();
  if (filename.length > MAX_FILENAME_BYTES || (mode !== 'octet' && mode !== 'netascii' && mode !== 'mail')) return null;
  const options: TftpRequest['options'] = {};
  const seen = new Set<string>();
  for (let i = 2; i < strings.length; i += 2) {
    const key = (strings[i] as string).toLowerCase();
    const value = strings[i + 1] as string;
    if (key.length > MAX_OPTION_BYTES || value.length > MAX_OPTION_BYTES || seen.has(key)) return null;
    seen.add(key);
    if (key === 'blksize') {
      const size = decimal(value, 5);
      if (size !== null && size >= MIN_BLOCK_SIZE && size <= MAX_BLOCK_SIZE) options.blksize = size;
    } else if (key === 'tsize') {
      if (decimal(value, 20) !== null) options.tsize = true;
    }
  }
  return { kind: opcode === Opcode.RRQ ? 'read' : 'write', filename, mode, options };
}

/** What a client may send during a read: ACK (exactly 4 bytes) or ERROR. */
export function parseClientReply(buf: Buffer): ClientReply | null {
  if (buf.length < 4 || buf.length > MAX_REQUEST_BYTES) return null;
  const opcode = buf.readUInt16BE(0);
  if (opcode === Opcode.ACK) return buf.length === 4 ? { kind: 'ack', block: buf.readUInt16BE(2) } : null;
  if (opcode === Opcode.ERROR) return { kind: 'error', code: buf.readUInt16BE(2) };
  return null;
}

export function dataHeader(block: number): Buffer {
  const header = Buffer.allocUnsafe(4);
  header.writeUInt16BE(Opcode.DATA, 0);
  header.writeUInt16BE(block & 0xffff, 2);
  return header;
}

export function encodeOack(options: Record<string, number>): Buffer {
  const parts = Object.entries(options).flatMap(([key, value]) => [Buffer.from(`${key}\0${value}\0`, 'latin1')]);
  const head = Buffer.alloc(2);
  head.writeUInt16BE(Opcode.OACK, 0);
  return Buffer.concat([head, ...parts]);
}

export function encodeError(code: TftpErrorCode, message: string): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(Opcode.ERROR, 0);
  head.writeUInt16BE(code, 2);
  return Buffer.concat([head, Buffer.from(`${message}\0`, 'latin1')]);
}
