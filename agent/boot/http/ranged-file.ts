// Sending a file to a machine over the boot server's HTTP side, shared by /boot/files and the
// image cache: one byte range per request (206; 416 when it starts past the end; several
// ranges, another unit or a stale If-Range get the whole file), HEAD, and a bounded number
// of transfers at once (past it 503 with Retry-After, which iPXE waits out and retries).
//
// "Zero-copy" here is as close as Node gets: Node has no sendfile(2), so each chunk is read
// from the page cache into a userspace buffer and written to the socket (two copies, no
// more). The 1 MiB highWaterMark keeps that to one large read and write per MiB; each
// transfer holds about two chunks (one read ahead, one in the socket).
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { sendText } from './server';

const STREAM_CHUNK_BYTES = 1024 * 1024;
const clientGone = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNRESET']);

type ByteRange = { start: number; end: number };

/**
 * The one byte range a Range header asks for within size bytes: a range, 'unsatisfiable',
 * or null for the whole file (no header, a malformed one, several ranges, another unit).
 */
function byteRangeOf(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim()) : null;
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null; // invalid: ignored, as RFC 9110 says
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** Transfers at once: a slot is taken for the whole of one, or the request is told to come back. */
export class TransferSlots {
  private taken = 0;

  constructor(readonly max: number) {}

  /** Runs `transfer` in a slot, or answers 503 when none is free. */
  async run(res: http.ServerResponse, transfer: () => Promise<void>): Promise<void> {
    if (this.taken >= this.max) return sendText(res, 503, 'busy; retry\n', { 'retry-after': '5' });
    this.taken += 1;
    try {
      await transfer();
    } finally {
      this.taken -= 1;
    }
  }
}

interface RangedFile {
  /** An open handle (closed by the caller) or a path. */
  source: { handle: FileHandle } | { path: string };
  size: number;
  etag: string;
  lastModified?: string;
  cacheControl: string;
}

/** Answers GET or HEAD with the file (or its one requested range); a client that hangs up mid-stream is not an error. */
export async function sendRangedFile(req: http.IncomingMessage, res: http.ServerResponse, file: RangedFile): Promise<void> {
  const ifRange = req.headers['if-range'];
  const fresh = ifRange === undefined || ifRange === file.etag || (file.lastModified !== undefined && ifRange === file.lastModified);
  const range = fresh ? byteRangeOf(req.headers.range, file.size) : null;
  const common = {
    'accept-ranges': 'bytes',
    etag: file.etag,
    ...(file.lastModified ? { 'last-modified': file.lastModified } : {}),
    'content-type': 'application/octet-stream',
    'cache-control': file.cacheControl,
  };
  if (range === 'unsatisfiable') return sendText(res, 416, 'range not satisfiable\n', { ...common, 'content-range': `bytes */${file.size}` });
  const { start, end } = range ?? { start: 0, end: file.size - 1 };
  const length = Math.max(0, end - start + 1);
  res.writeHead(range ? 206 : 200, { ...common, 'content-length': length, ...(range ? { 'content-range': `bytes ${start}-${end}/${file.size}` } : {}) });
  if (req.method === 'HEAD' || length === 0) return void res.end();
  // With a handle, autoClose is off: the caller closes it once.
  const stream =
    'handle' in file.source
      ? createReadStream('', { fd: file.source.handle, start, end, highWaterMark: STREAM_CHUNK_BYTES, autoClose: false })
      : createReadStream(file.source.path, { start, end, highWaterMark: STREAM_CHUNK_BYTES });
  try {
    await pipeline(stream, res);
  } catch (error) {
    if (!clientGone.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}
