// What the TFTP server does with a datagram on its listening port: a pure decision, no I/O.
// Silence is the default: while this agent does not hold the boot lease (another agent may),
// for anything that is not a well-formed request, for a retransmitted request of a transfer
// already running, and beyond the caps (answering would take a socket too; firmware retries).
// A well-formed request we will not serve gets an ERROR saying why.
import { isSafeFileName } from '../jail';
import { MAX_BLOCK_SIZE, parseRequest, TftpError, type TftpErrorCode } from './packet';

export interface TftpLimits {
  maxTransfers: number;
  maxTransfersPerSource: number;
  /** The largest blksize we agree to (the client's, if smaller). */
  maxBlockSize: number;
}

export const defaultTftpLimits: TftpLimits = { maxTransfers: 64, maxTransfersPerSource: 4, maxBlockSize: MAX_BLOCK_SIZE };

export interface RequestContext {
  active: boolean;
  transfers: number;
  transfersFromSource: number;
  /** A transfer for this source address and port is running (the client resent its request). */
  duplicate: boolean;
}

export type RequestDecision =
  | { action: 'drop'; why: 'not-active' | 'malformed' | 'duplicate' | 'over-cap' }
  | { action: 'refuse'; code: TftpErrorCode; message: string }
  | { action: 'read'; filename: string; blockSize: number; negotiate: { blksize?: number; tsize: boolean } };

export function decideRequest(packet: Buffer, context: RequestContext, limits: TftpLimits): RequestDecision {
  if (!context.active) return { action: 'drop', why: 'not-active' };
  const request = parseRequest(packet);
  if (!request) return { action: 'drop', why: 'malformed' };
  if (context.duplicate) return { action: 'drop', why: 'duplicate' };
  if (context.transfers >= limits.maxTransfers || context.transfersFromSource >= limits.maxTransfersPerSource) return { action: 'drop', why: 'over-cap' };
  if (request.kind === 'write') return { action: 'refuse', code: TftpError.ACCESS_VIOLATION, message: 'read-only server' };
  if (request.mode !== 'octet') return { action: 'refuse', code: TftpError.ILLEGAL_OPERATION, message: 'only octet mode is served' };
  if (!isSafeFileName(request.filename)) return { action: 'refuse', code: TftpError.ACCESS_VIOLATION, message: 'file name not allowed' };
  const blksize = request.options.blksize !== undefined ? Math.min(request.options.blksize, limits.maxBlockSize) : undefined;
  return {
    action: 'read',
    filename: request.filename,
    blockSize: blksize ?? 512,
    negotiate: { ...(blksize !== undefined ? { blksize } : {}), tsize: request.options.tsize === true },
  };
}
