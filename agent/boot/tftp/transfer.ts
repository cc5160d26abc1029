// One read transfer: its own UDP socket (the server's transfer ID), connected to the client
// so the kernel drops datagrams from anyone else; lock-step DATA/ACK with bounded
// retransmission (backoff, then give up silently) and a deadline for the whole transfer.
// The file is read in chunks of about 256 KiB with the next one prefetched, so memory per
// transfer stays bounded whatever the file and block size, and most blocks go out without
// waiting on the disk. Block numbers wrap past 65535, as tftpd-hpa and iPXE do.
import dgram from 'node:dgram';
import type { JailedFile } from '../jail';
import { dataHeader, encodeOack, parseClientReply } from './packet';

const CHUNK_BYTES = 256 * 1024;

export interface TransferTiming {
  /** First retransmission after this long without the expected ACK; doubles each time, up to 4×. */
  retransmitMs: number;
  maxRetransmits: number;
  /** The whole transfer, however steadily the client ACKs. */
  maxTransferMs: number;
}

export const defaultTransferTiming: TransferTiming = { retransmitMs: 1_000, maxRetransmits: 5, maxTransferMs: 5 * 60_000 };

export type TransferOutcome = 'done' | 'timeout' | 'too-slow' | 'client-error' | 'lease-lost' | 'read-error' | 'socket-error' | 'closed';

interface ReadTransferParams {
  peer: { address: string; port: number };
  bindAddress: string;
  file: JailedFile;
  blockSize: number;
  negotiate: { blksize?: number; tsize: boolean };
  timing: TransferTiming;
  /** Checked on every ACK: a transfer stops (silently) once this agent loses the boot lease. */
  isActive: () => boolean;
  onEnd: (outcome: TransferOutcome, bytesSent: number) => void;
}

interface Chunk {
  index: number;
  data: Buffer;
}

export class ReadTransfer {
  private readonly socket = dgram.createSocket('udp4');
  private readonly chunkBlocks: number;
  /** The block last sent (0: the OACK), counted without wrapping. */
  private block = 0;
  private finalSent = false;
  private lastPacket: Buffer[] = [];
  private bytesSent = 0;
  private current: Chunk | null = null;
  private prefetch: { index: number; data: Promise<Buffer> } | null = null;
  private retransmits = 0;
  private retransmitTimer: NodeJS.Timeout | null = null;
  private retransmitDelay = 0;
  private readonly deadline: NodeJS.Timeout;
  private ended = false;

  constructor(private readonly params: ReadTransferParams) {
    this.chunkBlocks = Math.max(1, Math.floor(CHUNK_BYTES / params.blockSize));
    this.deadline = setTimeout(() => this.end('too-slow'), params.timing.maxTransferMs);
    this.socket.on('error', () => this.end('socket-error'));
    this.socket.on('message', (message) => this.onMessage(message));
  }

  start(): void {
    const { peer, bindAddress, negotiate, file } = this.params;
    // The first chunk is read while the socket binds and the OACK is answered.
    this.prefetch = { index: 0, data: this.read(0) };
    this.prefetch.data.catch(() => undefined);
    this.socket.bind(0, bindAddress, () => {
      this.socket.connect(peer.port, peer.address, () => {
        if (this.ended) return;
        const oack: Record<string, number> = {};
        if (negotiate.blksize !== undefined) oack.blksize = negotiate.blksize;
        if (negotiate.tsize) oack.tsize = file.size;
        if (Object.keys(oack).length > 0) this.send([encodeOack(oack)]);
        else this.sendBlock(1);
      });
    });
  }

  /** Ends the transfer now (server shutdown). */
  stop(): void {
    this.end('closed');
  }

  private onMessage(message: Buffer): void {
    const reply = parseClientReply(message);
    if (!reply || this.ended) return; // garbage gets no answer
    if (reply.kind === 'error') return this.end('client-error');
    if (reply.block !== (this.block & 0xffff)) return; // a duplicate or stale ACK: resending on it would double the traffic (Sorcerer's Apprentice)
    if (this.finalSent) return this.end('done');
    if (!this.params.isActive()) return this.end('lease-lost');
    this.sendBlock(this.block + 1);
  }

  private sendBlock(block: number): void {
    const index = Math.floor((block - 1) / this.chunkBlocks);
    if (this.current?.index === index) return this.sendFrom(this.current, block);
    this.load(index).then(
      (chunk) => this.sendFrom(chunk, block),
      () => this.end('read-error'),
    );
  }

  private sendFrom(chunk: Chunk, block: number): void {
    if (this.ended) return;
    const start = ((block - 1) % this.chunkBlocks) * this.params.blockSize;
    const data = chunk.data.subarray(start, start + this.params.blockSize);
    this.block = block;
    this.finalSent = data.length < this.params.blockSize;
    this.bytesSent += data.length;
    this.send([dataHeader(block), data]);
  }

  private async load(index: number): Promise<Chunk> {
    const data = this.prefetch?.index === index ? await this.prefetch.data : await this.read(index);
    this.current = { index, data };
    const nextIndex = index + 1;
    this.prefetch = nextIndex * this.chunkBlocks * this.params.blockSize <= this.params.file.size ? { index: nextIndex, data: this.read(nextIndex) } : null;
    this.prefetch?.data.catch(() => undefined); // surfaces when (if) that chunk is needed
    return this.current;
  }

  private async read(index: number): Promise<Buffer> {
    const offset = index * this.chunkBlocks * this.params.blockSize;
    const length = Math.max(0, Math.min(this.chunkBlocks * this.params.blockSize, this.params.file.size - offset));
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = length > 0 ? await this.params.file.handle.read(buffer, 0, length, offset) : { bytesRead: 0 };
    return buffer.subarray(0, bytesRead);
  }

  private send(packet: Buffer[]): void {
    this.lastPacket = packet;
    this.retransmits = 0;
    if (this.retransmitTimer && this.retransmitDelay === this.params.timing.retransmitMs) this.retransmitTimer.refresh();
    else this.arm(this.params.timing.retransmitMs);
    this.socket.send(packet);
  }

  private arm(delay: number): void {
    if (this.retransmitTimer) clearTimeout(this.retransmitTimer);
    this.retransmitDelay = delay;
    this.retransmitTimer = setTimeout(() => this.onTimeout(), delay);
  }

  private onTimeout(): void {
    if (this.ended) return;
    if (this.retransmits >= this.params.timing.maxRetransmits) return this.end('timeout');
    this.retransmits += 1;
    this.arm(this.params.timing.retransmitMs * Math.min(4, 2 ** this.retransmits));
    this.socket.send(this.lastPacket);
  }

  private end(outcome: TransferOutcome): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.deadline);
    if (this.retransmitTimer) clearTimeout(this.retransmitTimer);
    this.socket.close();
    this.params.file.handle.close().catch(() => undefined);
    this.params.onEnd(outcome, this.bytesSent);
  }
}
