// A bench helper process that prints one JSON line when it is ready and runs until SIGTERM
// (bench/api/serve.ts, bench/api/bmcs.ts): started, its line read, and stopped.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ReadyChild<T> {
  ready: T;
  stop(): Promise<void>;
}

/** Runs `node --import tsx <script> ...args` from the repository root; its stderr goes to ours. */
export async function startReadyChild<T>(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ReadyChild<T>> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, script), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
  return {
    ready: JSON.parse(line) as T,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The child's side: runs `start`, prints what it answers as the one JSON line, and runs until
 * SIGTERM or SIGINT, when it stops what `start` started and exits. A failed start exits 1.
 */
export function serveUntilKilled<T>(start: () => Promise<{ ready: T; stop(): Promise<void> }>): void {
  start().then(
    ({ ready, stop }) => {
      process.stdout.write(`${JSON.stringify(ready)}\n`);
      const exit = () => void stop().then(() => process.exit(0));
      process.on('SIGTERM', exit);
      process.on('SIGINT', exit);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
