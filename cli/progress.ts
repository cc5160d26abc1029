// Progress of a long run on stderr: a bar redrawn in place on a terminal, plain lines (one
// per change) when stderr is a file or a pipe, so logs stay readable.

interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  update(done: number, total: number, text: string): void;
  /** Leaves the last bar on its own line. */
  end(): void;
}

const WIDTH = 30;

/** `[#########.....................]  30%` */
export function progressBar(done: number, total: number): string {
  const share = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(share * WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%`;
}

export function createProgress(stream: ProgressStream = process.stderr): Progress {
  let last = '';
  let drawn = false;
  return {
    update(done, total, text) {
      const line = `${progressBar(done, total)} ${done}/${total} ${text}`;
      if (line === last) return;
      last = line;
      if (stream.isTTY) {
        stream.write(`\r\x1b[2K${line}`); // carriage return, clear the line, redraw
        drawn = true;
      } else stream.write(`${new Date().toISOString()}  ${line}\n`);
    },
    end() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}
