import { spawn, type ChildProcess } from 'node:child_process';

/** SIGTERM, then SIGKILL after 3 s; resolves when the child has exited. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface FixtureExit {
  code: number | null;
  /** Everything it wrote, stdout and stderr as they came. */
  output: string;
}

/**
 * A test fixture (a TypeScript file) in a Node process of its own. `onOutput` sees the output so
 * far each time more comes (to answer it, or to wait for a line); a fixture still running after
 * `killAfterMs` is killed, so a hang fails its test instead of stalling the run.
 */
export function runFixture(
  file: string,
  args: string[] = [],
  options: { env?: NodeJS.ProcessEnv; killAfterMs?: number; onOutput?: (output: string, child: ChildProcess) => void } = {},
): { child: ChildProcess; exited: Promise<FixtureExit> } {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const more = (chunk: Buffer) => {
    output += chunk.toString();
    options.onOutput?.(output, child);
  };
  child.stdout?.on('data', more);
  child.stderr?.on('data', more);
  const kill = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
  // 'close', not 'exit': the output is whole only once its pipes have closed.
  const exited = new Promise<FixtureExit>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(kill);
      resolve({ code, output });
    }),
  );
  return { child, exited };
}
