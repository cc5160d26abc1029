// The boot server's HTTP listener. It faces an untrusted network: request headers are capped
// at 8 KiB, URLs at 512 characters, only GET and HEAD are served, and a path no route owns is
// a 404 with a script that exits. A source refused too often (404s for unknown MACs, grants
// or files: guesses at a boot entry's MAC or a cache grant) is answered 429 with a
// retry-after before any route runs (core/refusal-buckets.ts). Each route (iPXE scripts, boot
// files, the image cache) is its own module; this file only listens, bounds and dispatches.
import http from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { RefusalBuckets, type RefusalLimits } from '../../../core/refusal-buckets';
import type { AgentLog } from '../../common/log';
import type { BootServerMetrics } from '../metrics';

const BOOT_SERVER_MAX_HEADER_BYTES = 8 * 1024;
const MAX_URL_CHARS = 512;
/**
 * A machine's firmware fetches a handful of paths per boot and each machine has its own
 * address, so 100 refusals at once then 5 a second never limit a real one; a sweep of one
 * vendor's 2^24 MACs at 5 a second takes over a month.
 */
export const BOOT_REFUSAL_LIMITS: RefusalLimits = { burst: 100, perSecond: 5 };
/** The answers a guess earns: no such MAC, grant or file, a malformed or oversized request. */
const REFUSAL_STATUSES = new Set([400, 404, 405, 414]);

export interface BootHttpRoute {
  /** A path prefix ('/boot/files/') or an exact path ('/boot/ipxe'). */
  path: string;
  exact?: boolean;
  handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void>;
}

export interface BootHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function sendText(res: http.ServerResponse, status: number, text: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const exitScript = '#!ipxe\nexit\n';

/** The peer's address without the IPv4-mapped prefix, or null. */
export function remoteIp(req: http.IncomingMessage): string | null {
  const address = req.socket.remoteAddress ?? '';
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isIP(plain) ? plain : null;
}

/** The URL machines reach this server at: the configured public URL, else the address they used. */
export function baseUrlFor(req: http.IncomingMessage, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const local = req.socket.localAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
  return `http://${local.includes(':') ? `[${local}]` : local}:${req.socket.localPort ?? 80}`;
}

export async function startBootHttpServer(options: {
  address: string;
  port: number;
  publicUrl?: string;
  routes: BootHttpRoute[];
  log: AgentLog;
  metrics?: BootServerMetrics;
}): Promise<BootHttpServer> {
  const { log, routes, metrics } = options;
  const routeFor = (pathname: string) => routes.find((r) => (r.exact ? pathname === r.path : pathname.startsWith(r.path)));
  const refusals = new RefusalBuckets(BOOT_REFUSAL_LIMITS);

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // Counted by the route that owned the request (its path, a constant), never the URL asked for.
    let routePath = 'none';
    res.once('finish', () => metrics?.httpResponse(routePath, res.statusCode));
    const source = remoteIp(req) ?? 'unknown';
    const retryAfter = refusals.retryAfterSeconds(source);
    if (retryAfter > 0)
      return sendText(res, 429, `RATE_LIMITED: too many refused requests from ${source}; retry after ${retryAfter} s\n`, { 'retry-after': String(retryAfter) });
    res.once('finish', () => {
      if (REFUSAL_STATUSES.has(res.statusCode)) refusals.spend(source);
    });
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendText(res, 405, exitScript, { allow: 'GET, HEAD' });
    if (!req.url || req.url.length > MAX_URL_CHARS) return sendText(res, 414, exitScript);
    const url = new URL(req.url, 'http://boot.invalid');
    const route = routeFor(url.pathname);
    if (!route) return sendText(res, 404, exitScript);
    routePath = route.path;
    await route.handle(req, res, url);
  }

  const server = http.createServer(
    { maxHeaderSize: BOOT_SERVER_MAX_HEADER_BYTES, requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000 },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        log.error('boot server failed a request', { error: (error as Error).message });
        if (!res.headersSent) sendText(res, 500, '#!ipxe\nsleep 10\nreboot\n');
        else res.destroy();
      });
    },
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // Oversized headers (431) and malformed requests (400): answer briefly and close.
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    metrics?.httpResponse('none', Number(status.slice(0, 3)));
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.address === '0.0.0.0' || options.address === '::' ? '127.0.0.1' : options.address;
  const url = options.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
