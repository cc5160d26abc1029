// A real agent as its own process: the `ironflow agent <mode> …` command (bin/ironflow.mjs),
// so a test can stop it cleanly (SIGTERM) or kill it outright (SIGKILL: no session close, no
// worker shutdown), and start it again on the same data dir.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../services/config';
import { until } from './provision';

export interface AgentProcess {
  child: ChildProcess;
  /** The agent's log, one JSON line each (stderr). */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The log lines that are JSON entries. */
  entries(): Array<Record<string, unknown>>;
  /** Waits for a log line whose message is `message`. */
  waitForLog(message: string, ms?: number): Promise<Record<string, unknown>>;
}

/** How the agent's process is started: node:child_process spawn, or e.g. a test network's spawnIn(ns, …). */
export type SpawnAgent = (command: string, args: string[], options: SpawnOptions) => ChildProcess;

/** `ironflow agent site --config FILE`. */
export const spawnSiteAgent = (configFile: string, env: Record<string, string> = {}, spawnAgent: SpawnAgent = spawn): AgentProcess =>
  spawnAgentProcess(['site', '--config', configFile], env, spawnAgent);

/** `ironflow agent <args>`, e.g. `['node', '--data-dir', dir]`. */
export function spawnAgentProcess(args: string[], env: Record<string, string> = {}, spawnAgent: SpawnAgent = spawn): AgentProcess {
  const child = spawnAgent(process.execPath, [path.join(repoRoot, 'bin', 'ironflow.mjs'), 'agent', ...args], {
    cwd: repoRoot,
    env: { ...process.env, IRONFLOW_JOIN_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8');
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts.filter((l) => l.trim() !== ''));
  });
  child.stdout?.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8').trimEnd()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const parsed = () =>
    lines.flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    child,
    lines,
    exited,
    entries: parsed,
    async waitForLog(message, ms = 60_000) {
      const entry = await until(
        () => (child.exitCode !== null ? null : (parsed().find((e) => e.message === message) ?? undefined)),
        (e) => e !== undefined,
        ms,
        `the agent to log "${message}"; log: ${lines.slice(-5).join(' | ')}`,
      );
      if (entry === null) throw new Error(`the agent exited (${child.exitCode}) before logging "${message}": ${lines.slice(-10).join('\n')}`);
      return entry as Record<string, unknown>;
    },
  };
}

/** The node id the agent joined as (its identity.json), once it has joined. */
export function nodeIdOf(dataDir: string): string {
  const file = path.join(dataDir, 'identity.json');
  if (!existsSync(file)) throw new Error(`${file} does not exist: the agent has not joined`);
  return (JSON.parse(readFileSync(file, 'utf8')) as { nodeId: string }).nodeId;
}
