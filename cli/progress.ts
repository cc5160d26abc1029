// Progress of a long run on stderr: a bar redrawn in place on a terminal, plain lines when
// stderr is a file or a pipe, so logs stay readable: one per change, but at most one a
// second (2,000 machines starting would write 2,000 lines) with the first, the finished
// one and, at end(), the last state always written.

interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  update(done: number, total: number, text: string): void;
  /** Leaves the last bar on its own line; off a terminal, writes the last state if it was held back. */
  end(): void;
}

interface ProgressOptions {
  /** Off a terminal, the least time between two lines (the finished one excepted). */
  plainLineEveryMs?: number;
  now?: () => number;
}

const WIDTH = 30;

/** `[#########.....................]  30%` */
export function progressBar(done: number, total: number): string {
  const share = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(share * WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%`;
}

export function createProgress(stream: ProgressStream = process.stderr, options: ProgressOptions = {}): Progress {
  const every = options.plainLineEveryMs ?? 1000;
  const now = options.now ?? Date.now;
  let last = '';
  let drawn = false;
  let held: string | undefined;
  let writtenAt = -Infinity;
  const writePlain = (line: string) => {
    stream.write(`${new Date().toISOString()}  ${line}\n`);
    writtenAt = now();
    held = undefined;
  };
  return {
    update(done, total, text) {
      const line = `${progressBar(done, total)} ${done}/${total} ${text}`;
      if (line === last) return;
      last = line;
      if (stream.isTTY) {
        stream.write(`\r\x1b[2K${line}`); // carriage return, clear the line, redraw
        drawn = true;
      } else if (done >= total || now() - writtenAt >= every) writePlain(line);
      else held = line;
    },
    end() {
      if (held !== undefined) writePlain(held);
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}
