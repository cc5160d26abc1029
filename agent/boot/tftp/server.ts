// The boot server's read-only TFTP (spec 001, "The boot server", stage 2): the iPXE builds in
// tftp_root, octet mode, blksize and tsize negotiation, nothing outside the root, at most 64
// transfers at once and 4 per source address, and nothing at all while this agent does not
// hold the boot lease. Decisions are in handler.ts; this file owns the sockets.
//
// Why not the npm `tftp` package's server: it answers every malformed or refused datagram
// with an ERROR from a fresh socket (one socket per garbage packet), serves WRQ unless told
// not to (and still answers it), has no per-source or total cap and no hook to drop a request
// unanswered, joins the root and the client's name without a symlink check, and exposes no
// typed API. Its packet codec throws on malformed input. The protocol is small enough that
// bounded code of our own (packet.ts, handler.ts, transfer.ts) is the clearer choice.
import dgram from 'node:dgram';
import type { AgentLog } from '../../common/log';
import type { BootServerMetrics } from '../metrics';
import { openInside } from '../jail';
import { decideRequest, defaultTftpLimits, type TftpLimits } from './handler';
import { encodeError, TftpError, type TftpErrorCode } from './packet';
import { defaultTransferTiming, ReadTransfer, type TransferOutcome, type TransferTiming } from './transfer';
import { udpBindError } from '../bind-error';

export interface TftpServerOptions {
  /** The address to listen on and answer from: the agent's server_ip on the provisioning network. */
  address: string;
  port: number;
  root: string;
  state: () => { active: boolean };
  log: AgentLog;
  limits?: Partial<TftpLimits>;
  timing?: Partial<TransferTiming>;
  metrics?: BootServerMetrics;
}

interface TftpStats {
  transfers: number;
  /** Source addresses with a transfer running. */
  sources: number;
  served: number;
  refused: number;
  dropped: number;
}

export interface TftpServer {
  port: number;
  stats(): TftpStats;
  close(): Promise<void>;
}

/** Refusals are logged, but an untrusted network must not be able to flood the log. */
const REFUSAL_LOG_WINDOW_MS = 10_000;
const REFUSAL_LOGS_PER_WINDOW = 10;

export async function startTftpServer(options: TftpServerOptions): Promise<TftpServer> {
  const limits: TftpLimits = { ...defaultTftpLimits, ...options.limits };
  const timing: TransferTiming = { ...defaultTransferTiming, ...options.timing };
  const { log, metrics } = options;
  const socket = dgram.createSocket('udp4');
  /** Keyed by "address:port"; 'opening' holds the slot while the file is looked up. */
  const transfers = new Map<string, ReadTransfer | 'opening'>();
  const perSource = new Map<string, number>();
  const counts = { served: 0, refused: 0, dropped: 0 };
  const refusalLog = { windowStart: 0, logged: 0 };
  let closed = false;

  const isActive = () => !closed && options.state().active;

  function release(key: string, address: string): void {
    transfers.delete(key);
    const left = (perSource.get(address) ?? 1) - 1;
    if (left > 0) perSource.set(address, left);
    else perSource.delete(address);
  }

  function refuse(peer: dgram.RemoteInfo, code: TftpErrorCode, message: string, fields: Record<string, unknown> = {}): void {
    counts.refused += 1;
    metrics?.tftpRequest('refused');
    if (!closed) socket.send(encodeError(code, message), peer.port, peer.address);
    const now = Date.now();
    if (now - refusalLog.windowStart > REFUSAL_LOG_WINDOW_MS) Object.assign(refusalLog, { windowStart: now, logged: 0 });
    if (refusalLog.logged++ < REFUSAL_LOGS_PER_WINDOW) log.info('tftp request refused', { peer: peer.address, reason: message, ...fields });
  }

  async function serve(
    peer: dgram.RemoteInfo,
    key: string,
    filename: string,
    blockSize: number,
    negotiate: { blksize?: number; tsize: boolean },
  ): Promise<void> {
    const opened = await openInside(options.root, filename);
    if (!opened.ok) {
      release(key, peer.address);
      if (!isActive()) return metrics?.tftpRequest('dropped-not-active');
      const notFound = opened.reason === 'not-found';
      return refuse(peer, notFound ? TftpError.FILE_NOT_FOUND : TftpError.ACCESS_VIOLATION, notFound ? 'file not found' : 'file not served', {
        file: filename,
      });
    }
    if (!isActive()) {
      release(key, peer.address);
      metrics?.tftpRequest('dropped-not-active');
      await opened.file.handle.close();
      return;
    }
    metrics?.tftpRequest('read');
    const onEnd = (outcome: TransferOutcome, bytes: number) => {
      release(key, peer.address);
      metrics?.tftpTransfer(outcome);
      if (outcome === 'done') counts.served += 1;
      const fields = { peer: peer.address, file: filename, blockSize, bytes };
      if (outcome === 'done') log.info('tftp transfer done', fields);
      else if (outcome !== 'closed') log.warn('tftp transfer stopped', { ...fields, outcome });
    };
    const transfer = new ReadTransfer({
      peer: { address: peer.address, port: peer.port },
      bindAddress: options.address,
      file: opened.file,
      blockSize,
      negotiate,
      timing,
      isActive,
      onEnd,
    });
    transfers.set(key, transfer);
    transfer.start();
  }

  socket.on('message', (packet, peer) => {
    const key = `${peer.address}:${peer.port}`;
    const decision = decideRequest(
      packet,
      { active: isActive(), transfers: transfers.size, transfersFromSource: perSource.get(peer.address) ?? 0, duplicate: transfers.has(key) },
      limits,
    );
    if (decision.action === 'drop') {
      counts.dropped += 1;
      metrics?.tftpRequest(`dropped-${decision.why}`);
      return;
    }
    if (decision.action === 'refuse') return refuse(peer, decision.code, decision.message);
    transfers.set(key, 'opening');
    perSource.set(peer.address, (perSource.get(peer.address) ?? 0) + 1);
    serve(peer, key, decision.filename, decision.blockSize, decision.negotiate).catch((error: unknown) => {
      if (transfers.get(key) === 'opening') release(key, peer.address);
      log.error('tftp request failed', { peer: peer.address, error: (error as Error).message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', (error: NodeJS.ErrnoException) =>
      reject(udpBindError(error, { service: 'TFTP', port: options.port, address: options.address, configKey: 'tftp' })),
    );
    socket.bind(options.port, options.address, () => {
      // Once bound, a socket error on the listener (rare for UDP) is logged; requests keep being served.
      socket.removeAllListeners('error');
      socket.on('error', (error) => log.error('tftp listener error', { error: error.message }));
      resolve();
    });
  });
  const port = socket.address().port;
  log.info('tftp listening', { address: options.address, port, root: options.root });

  return {
    port,
    stats: () => ({ transfers: transfers.size, sources: perSource.size, ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        for (const transfer of transfers.values()) if (transfer !== 'opening') transfer.stop();
        socket.close(() => resolve());
      }),
  };
}
