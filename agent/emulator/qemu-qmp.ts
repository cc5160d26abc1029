// A QMP client (QEMU Machine Protocol: JSON lines over a unix socket) for the commands a BMC
// needs: system_powerdown, system_reset, quit, query-status, blockdev-change-medium, eject.
// One command at a time, answers matched in order; events are ignored. Lines are bounded (a
// QEMU gone wrong must not grow our memory), and every command has a deadline.
import net from 'node:net';

const MAX_LINE_BYTES = 1024 * 1024;
const COMMAND_TIMEOUT_MS = 10_000;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class QmpClient {
  private buffer = '';
  private readonly pending: Pending[] = [];
  private closed: Error | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the QMP socket closed')));
  }

  /**
   * Connects to QEMU's `-qmp unix:<path>,server=on,wait=off`, retrying until it listens (or
   * `alive` says the process is gone), and negotiates capabilities.
   */
  static async connect(socketPath: string, options: { timeoutMs?: number; alive?: () => boolean } = {}): Promise<QmpClient> {
    const timeoutMs = options.timeoutMs ?? 15_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (options.alive && !options.alive()) throw new Error(`QEMU exited before its QMP socket ${socketPath} answered`);
      try {
        const socket = await new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(socketPath, () => resolve(s));
          s.once('error', reject);
        });
        const client = new QmpClient(socket);
        await client.greeting();
        await client.execute('qmp_capabilities');
        return client;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`QMP at ${socketPath} did not answer within ${timeoutMs} ms: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** Runs a QMP command; resolves with its `return`, rejects with its `error.desc`. */
  execute(command: string, args?: Record<string, unknown>): Promise<unknown> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.pending.indexOf(entry);
        if (index >= 0) this.pending.splice(index, 1);
        reject(new Error(`QMP ${command} got no answer within ${COMMAND_TIMEOUT_MS} ms`));
      }, COMMAND_TIMEOUT_MS);
      const entry: Pending = {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      };
      this.pending.push(entry);
      this.socket.write(`${JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}) })}\n`);
    });
  }

  /** 'running', 'paused', 'shutdown', … */
  async status(): Promise<string> {
    const answer = (await this.execute('query-status')) as { status?: unknown };
    return typeof answer.status === 'string' ? answer.status : 'unknown';
  }

  close(): void {
    this.socket.destroy();
  }

  private greeting(): Promise<unknown> {
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_LINE_BYTES) return this.fail(new Error(`a QMP line exceeded ${MAX_LINE_BYTES} bytes`));
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line) this.answer(line);
    }
  }

  private answer(line: string): void {
    let message: { QMP?: unknown; return?: unknown; error?: { desc?: string }; event?: string };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return;
    }
    if (message.event !== undefined) return;
    const waiting = this.pending.shift();
    if (!waiting) return;
    if (message.error) waiting.reject(new Error(`QMP: ${message.error.desc ?? 'error'}`));
    else waiting.resolve(message.QMP ?? message.return);
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = error;
    for (const waiting of this.pending.splice(0)) waiting.reject(error);
    this.socket.destroy();
  }
}
