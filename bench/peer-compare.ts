// Runs our side and a peer's side of a benchmark alternately (ours first on even rounds, the
// peer's first on odd ones, so neither always gets the warmer cache) and reports medians.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export const run = promisify(execFile);

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Each side's measurements, taken in alternating order; `measure` returns one number per round. */
export async function alternate(rounds: number, ours: () => Promise<number>, peer: () => Promise<number>): Promise<{ ours: number[]; peer: number[] }> {
  const result = { ours: [] as number[], peer: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      result.ours.push(await ours());
      result.peer.push(await peer());
    } else {
      result.peer.push(await peer());
      result.ours.push(await ours());
    }
  }
  return result;
}

/** Fails with the command that installs a missing tool, instead of skipping. */
export async function requireTool(command: string, args: string[], install: string): Promise<void> {
  await run(command, args).catch(() => {
    throw new Error(`${command} is missing: ${install} (or bash scripts/test-deps.sh)`);
  });
}
