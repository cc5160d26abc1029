// The boot server's HTTP side (spec 001, "The boot server"): GET /boot/chain.ipxe and
// GET /boot/ipxe. It faces an untrusted network: request headers are capped at 8 KiB,
// only GET of these two paths is served, query fields are taken only when well-formed,
// and a script is rendered only for a MAC with a live boot entry while this agent is the
// active boot server. Every script carries a fresh signed discovery assertion.
import http from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { normalizeMac } from '../../core/mac';
import type { BootEntry } from '../../core/boot/boot-entry';
import type { AgentLog } from '../site/log';
import { signDiscoveryAssertion } from './assertion';
import type { BootSecrets } from './boot-secrets';
import type { BootServerConfig } from './config';
import type { BootEntryStore } from './entries';
import { chainScript, notActiveScript, ramdiskScript, retryScript, unknownMachineScript } from './ipxe-script';

export const BOOT_SERVER_MAX_HEADER_BYTES = 8 * 1024;
const MAX_URL_CHARS = 512;
const TOKEN_WAIT_SECONDS = 5;
const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export interface BootServerState {
  /** Holds the boot lease at a non-zero epoch and heard from the control plane within the TTL. */
  active: boolean;
  epoch: number;
}

export interface BootServerDeps {
  config: BootServerConfig;
  entries: BootEntryStore;
  secrets: BootSecrets;
  state: () => BootServerState;
  identity: { nodeId: string; siteId: string; signer: import('../site/control-plane-client').Signer; caFingerprint: string };
  log: AgentLog;
}

export interface BootServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Only well-formed fields of the query: anything else is as if it were absent. */
export function machineQuery(url: URL): { mac: string | undefined; uuid: string | null; ip: string | null } {
  const field = (name: string, max: number) => {
    const value = url.searchParams.get(name);
    return value !== null && value.length <= max ? value : undefined;
  };
  const macText = field('mac', 32);
  const uuid = field('uuid', 36);
  const ip = field('ip', 45);
  return {
    mac: macText ? normalizeMac(macText) : undefined,
    uuid: uuid && uuidPattern.test(uuid) ? uuid.toLowerCase() : null,
    ip: ip && isIP(ip) ? ip : null,
  };
}

function send(res: http.ServerResponse, status: number, script: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(script) });
  res.end(script);
}

const remoteIp = (req: http.IncomingMessage): string | null => {
  const address = req.socket.remoteAddress ?? '';
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isIP(plain) ? plain : null;
};

export async function startBootServer(deps: BootServerDeps): Promise<BootServer> {
  const { config, log } = deps;
  let port = 0;
  const baseUrlFor = (req: http.IncomingMessage): string => {
    if (config.publicUrl) return config.publicUrl;
    const local = req.socket.localAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
    return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
  };

  async function renderFor(entry: BootEntry, query: ReturnType<typeof machineQuery>, req: http.IncomingMessage, state: BootServerState): Promise<{ status: number; script: string }> {
    const token = await deps.secrets.tokenFor(entry);
    if (!token) {
      const again = `${baseUrlFor(req)}/boot/ipxe?mac=${entry.mac}`;
      return { status: 200, script: retryScript(again, TOKEN_WAIT_SECONDS) };
    }
    const assertion = signDiscoveryAssertion(
      { signer: deps.identity.signer, siteId: deps.identity.siteId, agentNodeId: deps.identity.nodeId, epoch: state.epoch },
      entry,
      { ip: query.ip ?? remoteIp(req), productUuid: query.uuid },
    );
    const script = ramdiskScript({
      kernel: config.kernel,
      initrd: config.initrd,
      params: [
        ['gateway', config.gatewayUrl],
        ['ca', deps.identity.caFingerprint],
        ['mac', entry.mac],
        ['token', token],
        ['assertion', assertion],
      ],
      cmdline: config.cmdline,
    });
    return { status: 200, script };
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'GET' || !req.url || req.url.length > MAX_URL_CHARS) return send(res, req.method !== 'GET' ? 405 : 414, '#!ipxe\nexit\n');
    const url = new URL(req.url, 'http://boot.invalid');
    if (url.pathname === '/boot/chain.ipxe') return send(res, 200, chainScript(baseUrlFor(req)));
    if (url.pathname !== '/boot/ipxe') return send(res, 404, '#!ipxe\nexit\n');
    const state = deps.state();
    if (!state.active || state.epoch <= 0) return send(res, 503, notActiveScript);
    const query = machineQuery(url);
    const entry = query.mac ? deps.entries.get(query.mac) : undefined;
    if (!entry) {
      log.info('boot script refused: no boot entry for this MAC', { mac: query.mac ?? null });
      return send(res, 404, unknownMachineScript);
    }
    const { status, script } = await renderFor(entry, query, req, state);
    log.info(status === 200 && script.includes('kernel ') ? 'boot script served' : 'boot script: waiting for the discovery token', { mac: entry.mac, nodeId: entry.nodeId, workflowId: entry.workflowId, epoch: state.epoch });
    send(res, status, script);
  }

  const server = http.createServer({ maxHeaderSize: BOOT_SERVER_MAX_HEADER_BYTES, requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error('boot server failed a request', { error: (error as Error).message });
      if (!res.headersSent) send(res, 500, '#!ipxe\nsleep 10\nreboot\n');
      else res.destroy();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // Oversized headers (431) and malformed requests (400): answer briefly and close.
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.httpPort, config.httpAddress, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const host = config.httpAddress === '0.0.0.0' || config.httpAddress === '::' ? '127.0.0.1' : config.httpAddress;
  const url = config.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info('boot server listening', { url, proxyDhcp: config.proxyDhcp });
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
