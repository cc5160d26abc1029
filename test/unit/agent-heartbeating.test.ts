// A running agent step heartbeats at half its heartbeat timeout while it runs
// (agent/common/heartbeating.ts), so Temporal retries a step whose agent died after that
// timeout, not the step's whole timeout; a step shorter than that sends no beat (Temporal counts
// the timeout from the step's start); each beat carries the step's latest progress (progress
// alone sends nothing: a deploy reports every chunk), and the beats stop when it ends. That the
// beats reach Temporal at that cadence is test/integration/agent-heartbeats.test.ts.
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { beatEveryMs, heartbeating, reportProgress } from '../../agent/common/heartbeating';
import { STEP_STARTED } from '../../core/step-started';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a running agent step', () => {
  it('beats at half its heartbeat timeout with its latest progress, and stops when it ends', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 2_000 });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const step = heartbeating(async (disk: string) => {
      await sleep(1_300);
      reportProgress({ disk, percent: 40 });
      await sleep(1_300);
      return 'wiped';
    });

    expect(await env.run(step, 'vda')).toBe('wiped');
    const ended = beats.length;
    await sleep(1_300);

    expect(beats.length).toBe(ended);
    // A beat at 1 s with no progress yet, then at 2 s (and later, on a slow machine) with the progress reported at 1.3 s.
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toBeUndefined();
    for (const details of beats.slice(1)) expect(details).toEqual({ disk: 'vda', percent: 40 });
  });

  it('sends no beat when it ends within half its heartbeat timeout', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    expect(await env.run(heartbeating(async () => sleep(1_200).then(() => 'set')))).toBe('set');
    await sleep(1_500);
    expect(beats).toEqual([]);
  });

  it('sends no beat for progress alone: a deploy reports every chunk', async () => {
    // A 20 s timeout: the first regular beat is due at 10 s, far past the loop even on a loaded machine.
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 20_000 });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const step = heartbeating(async () => {
      for (let chunk = 1; chunk <= 20; chunk++) {
        reportProgress({ bytesWritten: chunk * 8_388_608 });
        await sleep(50);
      }
      return 'written';
    });
    expect(await env.run(step)).toBe('written');
    // 20 reports in about 1 s: none of them went out as a beat of its own.
    expect(beats).toEqual([]);
  });

  it('beats as it starts when it has one attempt, and every beat says it started, so a lost task is told from one that ran', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 2_000, retryPolicy: { maximumAttempts: 1 } });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    expect(await env.run(heartbeating(async () => sleep(1_300).then(() => 'kexec')))).toBe('kexec');
    expect(beats.length).toBeGreaterThanOrEqual(2);
    for (const details of beats) expect(details).toEqual(STEP_STARTED);

    // With retries, Temporal retries a lost task itself: no beat at the start.
    const retried = new MockActivityEnvironment({ heartbeatTimeoutMs: 5_000, retryPolicy: { maximumAttempts: 3 } });
    const none: unknown[] = [];
    retried.on('heartbeat', (details: unknown) => none.push(details));
    expect(await retried.run(heartbeating(async () => 'set'))).toBe('set');
    expect(none).toEqual([]);
  });

  it('beats at half the timeout, at most once a second, and every 10 s without a timeout', () => {
    expect(beatEveryMs(5_000)).toBe(2_500);
    expect(beatEveryMs(60_000)).toBe(30_000);
    expect(beatEveryMs(1_500)).toBe(1_000);
    expect(beatEveryMs(undefined)).toBe(10_000);
    expect(beatEveryMs(0)).toBe(10_000);
  });

  it('reports progress outside an activity as nothing, without throwing', () => {
    expect(() => reportProgress({ disk: 'vda' })).not.toThrow();
  });
});
