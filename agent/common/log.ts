// The agent's log: one JSON line per entry on stderr, and the last entries kept in memory
// for logs.collect. Callers pass ids and states, never a token, key or password.
export type LogLevel = 'info' | 'warn' | 'error';

export interface LogEntry {
  time: string;
  level: LogLevel;
  message: string;
  [field: string]: unknown;
}

export class AgentLog {
  private readonly recent: LogEntry[] = [];

  constructor(
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
    private readonly keep = 500,
  ) {}

  log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
    const entry: LogEntry = { time: new Date().toISOString(), level, message, ...fields };
    this.recent.push(entry);
    if (this.recent.length > this.keep) this.recent.shift();
    this.write(`${JSON.stringify(entry)}\n`);
  }

  info(message: string, fields?: Record<string, unknown>): void {
    this.log('info', message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.log('warn', message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.log('error', message, fields);
  }

  /** The last `limit` entries, oldest first. */
  tail(limit: number): LogEntry[] {
    return this.recent.slice(-limit);
  }
}
