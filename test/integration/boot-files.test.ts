// GET and HEAD /boot/files/<name> through the real boot HTTP server (agent/boot/http):
// files_dir first, then the iPXE builds in tftp_root; single byte ranges (206, 416, If-Range);
// nothing outside the two directories, whether by name, by %-escapes or by a symlink; a
// client that goes away mid-stream leaves no open file behind; and downloads at once are capped.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { filesRoute } from '../../agent/boot/http/files-route';
import { startBootHttpServer, type BootHttpServer } from '../../agent/boot/http/server';
import { AgentLog } from '../../agent/common/log';

const TFTP_ROOT = '/usr/lib/ipxe';
let server: BootHttpServer;
let filesDir: string;
const log = new AgentLog(() => undefined);
const kernel = randomBytes(9 * 1024 * 1024 + 123);

beforeAll(async () => {
  if (!readdirSync(TFTP_ROOT).includes('snponly.efi')) throw new Error('the iPXE builds are missing: apt-get install -y ipxe (or bash scripts/test-deps.sh)');
  filesDir = mkdtempSync(path.join(inject('runDir'), 'boot-files-'));
  writeFileSync(path.join(filesDir, 'vmlinuz'), kernel);
  writeFileSync(path.join(filesDir, 'undionly.kpxe'), 'files_dir wins\n');
  writeFileSync(path.join(filesDir, 'empty'), '');
  mkdirSync(path.join(filesDir, 'subdir'));
  writeFileSync(path.join(filesDir, 'subdir', 'inner'), 'not served\n');
  symlinkSync('vmlinuz', path.join(filesDir, 'kernel-alias'));
  symlinkSync('/etc/hostname', path.join(filesDir, 'escape'));
  symlinkSync('../', path.join(filesDir, 'parent'));
  server = await startBootHttpServer({ address: '127.0.0.1', port: 0, routes: [filesRoute({ filesDir, tftpRoot: TFTP_ROOT })], log });
});

afterAll(async () => {
  await server?.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function request(pathname: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${pathname}`, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const openFds = () => readdirSync('/proc/self/fd').length;

describe('GET /boot/files/<name>', () => {
  it('serves a file of files_dir whole, with its length and Accept-Ranges', async () => {
    const answer = await request('/boot/files/vmlinuz');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe(String(kernel.length));
    expect(answer.headers['accept-ranges']).toBe('bytes');
    expect(answer.headers['content-type']).toBe('application/octet-stream');
    expect(answer.body.equals(kernel)).toBe(true);
  });

  it('serves the iPXE builds of tftp_root for UEFI HTTP boot, files_dir first', async () => {
    const efi = await request('/boot/files/snponly.efi');
    expect(efi.status).toBe(200);
    expect(efi.body.equals(readFileSync(`${TFTP_ROOT}/snponly.efi`))).toBe(true);
    expect((await request('/boot/files/undionly.kpxe')).body.toString()).toBe('files_dir wins\n');
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const head = await request('/boot/files/vmlinuz', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(kernel.length));
    expect(head.headers['accept-ranges']).toBe('bytes');
    expect(head.body.length).toBe(0);
    const ranged = await request('/boot/files/vmlinuz', { method: 'HEAD', headers: { range: 'bytes=0-99' } });
    expect(ranged).toMatchObject({ status: 206, headers: { 'content-length': '100', 'content-range': `bytes 0-99/${kernel.length}` } });
    expect(ranged.body.length).toBe(0);
  });

  it('serves an empty file', async () => {
    const answer = await request('/boot/files/empty');
    expect(answer).toMatchObject({ status: 200, headers: { 'content-length': '0' } });
    expect(answer.body.length).toBe(0);
  });
});

describe('byte ranges', () => {
  const size = kernel.length;
  it('answers one range with 206 and Content-Range, across the stream chunks', async () => {
    const cases: [string, number, number][] = [
      ['bytes=10-19', 10, 19],
      ['bytes=4194300-8388620', 4_194_300, 8_388_620],
      [`bytes=${size - 100}-`, size - 100, size - 1],
      ['bytes=-5', size - 5, size - 1],
      [`bytes=0-${size + 1000}`, 0, size - 1],
      [`bytes=-${size + 1}`, 0, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const answer = await request('/boot/files/vmlinuz', { headers: { range } });
      expect(answer.status, range).toBe(206);
      expect(answer.headers['content-range'], range).toBe(`bytes ${start}-${end}/${size}`);
      expect(answer.headers['content-length'], range).toBe(String(end - start + 1));
      expect(answer.body.equals(kernel.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers a range past the end with 416 and the size', async () => {
    for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=-0']) {
      const answer = await request('/boot/files/vmlinuz', { headers: { range } });
      expect(answer.status, range).toBe(416);
      expect(answer.headers['content-range'], range).toBe(`bytes */${size}`);
    }
  });

  it('serves the whole file for several ranges, a malformed Range or a stale If-Range', async () => {
    const { headers } = await request('/boot/files/vmlinuz', { method: 'HEAD' });
    const stale: Record<string, string>[] = [
      { range: 'bytes=0-1,5-6' },
      { range: 'bytes=abc' },
      { range: 'items=0-1' },
      { range: 'bytes=9-3' },
      { range: 'bytes=0-1', 'if-range': '"stale"' },
    ];
    for (const extra of stale) {
      const answer = await request('/boot/files/vmlinuz', { method: 'HEAD', headers: extra });
      expect(answer.status, JSON.stringify(extra)).toBe(200);
    }
    const current = await request('/boot/files/vmlinuz', { headers: { range: 'bytes=0-1', 'if-range': headers.etag as string } });
    expect(current.status).toBe(206);
    expect(current.body.equals(kernel.subarray(0, 2))).toBe(true);
  });
});

describe('the directory jail', () => {
  it('serves a symlink that stays inside the directory', async () => {
    const answer = await request('/boot/files/kernel-alias', { headers: { range: 'bytes=0-9' } });
    expect(answer.status).toBe(206);
    expect(answer.body.equals(kernel.subarray(0, 10))).toBe(true);
  });

  it('answers 404 for anything outside its directories', async () => {
    const outside = [
      '/boot/files/escape', // a symlink to /etc/hostname
      '/boot/files/parent', // a symlink to the parent directory
      '/boot/files/ipxe.efi', // Debian's: a symlink from /usr/lib/ipxe to /boot
      '/boot/files/..%2f..%2fetc%2fpasswd',
      '/boot/files/%2e%2e',
      '/boot/files/%2Fetc%2Fpasswd',
      '/boot/files/subdir/inner',
      '/boot/files/subdir',
      '/boot/files/.hidden',
      '/boot/files/',
      '/boot/files/%ff',
      '/boot/files/vmlinuz%00.efi',
      '/boot/files/missing',
    ];
    for (const pathname of outside) expect((await request(pathname)).status, pathname).toBe(404);
    // The request line's own ../ never reaches the route: the URL is normalized first.
    expect((await request('/boot/files/../../etc/passwd')).status).toBe(404);
  });
});

describe('streaming', () => {
  it('closes the file when the client goes away mid-stream, and keeps serving', async () => {
    await request('/boot/files/vmlinuz', { method: 'HEAD' });
    const before = openFds();
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${server.url}/boot/files/vmlinuz`, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve() : reject(error)));
      });
    }
    for (let i = 0; i < 100 && openFds() > before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(openFds()).toBeLessThanOrEqual(before);
    expect((await request('/boot/files/vmlinuz')).body.equals(kernel)).toBe(true);
    expect(log.tail(100).filter((entry) => entry.level === 'error')).toEqual([]);
  });
});

describe('download cap', () => {
  it('answers 503 with Retry-After beyond the cap, and serves again once a download ends', async () => {
    const dir = mkdtempSync(path.join(inject('runDir'), 'boot-files-cap-'));
    writeFileSync(path.join(dir, 'big.img'), '');
    truncateSync(path.join(dir, 'big.img'), 256 * 1024 * 1024); // more than the sockets buffer
    const capped = await startBootHttpServer({ address: '127.0.0.1', port: 0, routes: [filesRoute({ filesDir: dir, tftpRoot: dir }, 2)], log });
    try {
      // Two downloads that are never read: they hold their slots.
      const held = await Promise.all(
        [0, 1].map(
          () =>
            new Promise<http.ClientRequest>((resolve, reject) => {
              const req = http.get(`${capped.url}/boot/files/big.img`, (res) => {
                expect(res.statusCode).toBe(200);
                resolve(req);
              });
              req.on('error', reject);
            }),
        ),
      );
      const busy = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${capped.url}/boot/files/big.img`, resolve).on('error', reject));
      expect(busy.statusCode).toBe(503);
      expect(busy.headers['retry-after']).toBe('5');
      busy.resume();
      for (const req of held) req.destroy();
      let status = 0;
      for (let i = 0; i < 100 && status !== 206; i++) {
        await new Promise((r) => setTimeout(r, 20));
        status = await new Promise<number>((resolve, reject) =>
          http
            .get(`${capped.url}/boot/files/big.img`, { headers: { range: 'bytes=0-9' } }, (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            })
            .on('error', reject),
        );
      }
      expect(status).toBe(206);
    } finally {
      await capped.close();
    }
  });
});
