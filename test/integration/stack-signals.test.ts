import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('../fixtures/stack-parts-process.ts', import.meta.url));

/** Starts the fixture, sends `signal` once it is up and again once it is stopping; its exit code and output. */
function signalTwice(signal: 'SIGINT' | 'SIGTERM'): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.endsWith('up\n')) child.kill(signal);
    if (/stopping the test part…\n$/.test(output)) child.kill(signal);
  });
  child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, output });
    }),
  );
}

describe('a stack stopping on a signal', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('exits at once on a second %s while a part is still stopping, with the shell code %i', async (signal, code) => {
    const exited = await signalTwice(signal);
    expect(exited.output).toContain(`ironflow: ${signal}: stopping the test part…`);
    expect(exited.output).toContain(`ironflow: ${signal} again: exiting without waiting for the rest to stop.`);
    expect(exited.output).not.toContain('ironflow: stopped.');
    expect(exited.code).toBe(code);
  });
});
