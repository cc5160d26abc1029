import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runFixture, type FixtureExit } from '../helpers/child-process';

const fixture = fileURLToPath(new URL('../fixtures/stack-parts-process.ts', import.meta.url));

/** Starts the fixture, sends `signal` once it is up and again once it is stopping; its exit code and output. */
function signalTwice(signal: 'SIGINT' | 'SIGTERM'): Promise<FixtureExit> {
  return runFixture(fixture, [], {
    killAfterMs: 30_000,
    onOutput: (output, child) => {
      if (output.endsWith('up\n')) child.kill(signal);
      if (/stopping the test part…\n$/.test(output)) child.kill(signal);
    },
  }).exited;
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
