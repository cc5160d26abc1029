// GET and HEAD /boot/files/<name>: the ramdisk's kernel and initrd (files_dir), then the iPXE
// builds (tftp_root) for UEFI HTTP boot. <name> is one path segment of safe characters, and
// the file must really be inside its directory (jail.ts: symlinks resolved). One byte range
// per request (206, or 416 when it starts past the end); several ranges get the whole file.
//
// "Zero-copy" here is as close as Node gets: Node has no sendfile(2), so each chunk is read
// from the page cache into a userspace buffer and written to the socket (two copies, no
// more). The 1 MiB highWaterMark keeps that to one large read and write per MiB instead of
// many small ones. Memory is bounded: at most 64 downloads at once (then 503 with
// Retry-After, which iPXE waits out and retries), each holding about two chunks (one read
// ahead, one in the socket).
import { createReadStream } from 'node:fs';
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { openInside, type JailedFile } from '../jail';
import { sendText, type BootHttpRoute } from './server';

const PREFIX = '/boot/files/';
const STREAM_CHUNK_BYTES = 1024 * 1024;
const MAX_DOWNLOADS = 64;

export type ByteRange = { start: number; end: number };

/**
 * The one byte range a Range header asks for within size bytes: a range, 'unsatisfiable',
 * or null for the whole file (no header, a malformed one, several ranges, another unit).
 */
export function byteRangeOf(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
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

const clientGone = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNRESET']);

function decodedSegment(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null; // a malformed %-escape
  }
}

function etagOf(file: JailedFile): string {
  return `"${file.ino.toString(16)}-${file.size.toString(16)}-${Math.floor(file.mtimeMs).toString(16)}"`;
}

export function filesRoute(dirs: { filesDir: string; tftpRoot: string }, maxDownloads = MAX_DOWNLOADS): BootHttpRoute {
  let downloads = 0;

  async function openByName(name: string): Promise<JailedFile | null> {
    for (const dir of [dirs.filesDir, dirs.tftpRoot]) {
      const opened = await openInside(dir, name);
      if (opened.ok) return opened.file;
    }
    return null;
  }

  async function send(req: http.IncomingMessage, res: http.ServerResponse, file: JailedFile): Promise<void> {
    const etag = etagOf(file);
    const lastModified = new Date(file.mtimeMs).toUTCString();
    const ifRange = req.headers['if-range'];
    const range = ifRange === undefined || ifRange === etag || ifRange === lastModified ? byteRangeOf(req.headers.range, file.size) : null;
    const common = { 'accept-ranges': 'bytes', etag, 'last-modified': lastModified, 'content-type': 'application/octet-stream', 'cache-control': 'no-cache' };
    if (range === 'unsatisfiable') return sendText(res, 416, 'range not satisfiable\n', { ...common, 'content-range': `bytes */${file.size}` });
    const { start, end } = range ?? { start: 0, end: file.size - 1 };
    const length = end - start + 1;
    res.writeHead(range ? 206 : 200, { ...common, 'content-length': length, ...(range ? { 'content-range': `bytes ${start}-${end}/${file.size}` } : {}) });
    if (req.method === 'HEAD' || length === 0) return void res.end();
    // autoClose is off: the handle is closed once, in the caller's finally.
    await pipeline(createReadStream('', { fd: file.handle, start, end, highWaterMark: STREAM_CHUNK_BYTES, autoClose: false }), res);
  }

  return {
    path: PREFIX,
    async handle(req, res, url) {
      if (downloads >= maxDownloads) return sendText(res, 503, 'busy\n', { 'retry-after': '5' });
      downloads += 1;
      try {
        const name = decodedSegment(url.pathname.slice(PREFIX.length));
        const file = name === null ? null : await openByName(name);
        if (!file) return sendText(res, 404, 'not found\n');
        try {
          await send(req, res, file);
        } catch (error) {
          // The client went away mid-stream: nothing to answer, nothing wrong here.
          if (!clientGone.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
        } finally {
          await file.handle.close();
        }
      } finally {
        downloads -= 1;
      }
    },
  };
}
