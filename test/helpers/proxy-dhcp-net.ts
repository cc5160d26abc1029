// Line-oriented child processes inside a test network (test/helpers/netns.ts) for the proxy
// DHCP tests and bench: the server fixture and the PXE client fixture.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { TestNetwork } from './netns';

export interface LineChild {
  child: ChildProcess;
  /** The next stdout line that satisfies `match`. */
  nextLine(match?: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  send(line: string): void;
  stderr(): string;
}

export function spawnLineChild(network: TestNetwork, ns: string, args: string[], env: NodeJS.ProcessEnv = process.env): LineChild {
  const child = network.spawnIn(ns, process.execPath, ['--import', 'tsx', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
  const waiting: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];
  const buffered: string[] = [];
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-20_000);
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const index = waiting.findIndex((w) => w.match(line));
    if (index === -1) buffered.push(line);
    else waiting.splice(index, 1)[0]?.resolve(line);
  });
  return {
    child,
    stderr: () => errors,
    send: (line) => child.stdin?.write(`${line}\n`),
    nextLine(match = () => true, timeoutMs = 30_000) {
      const index = buffered.findIndex(match);
      if (index !== -1) return Promise.resolve(buffered.splice(index, 1)[0] as string);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line from ${args[0]} in ${timeoutMs} ms; stderr: ${errors.slice(-2000)}`)), timeoutMs);
        const onExit = (code: number | null) => reject(new Error(`${args[0]} exited with ${code}; stderr: ${errors.slice(-2000)}`));
        child.once('exit', onExit);
        waiting.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            child.off('exit', onExit);
            resolve(line);
          },
        });
      });
    },
  };
}
