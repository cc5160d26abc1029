// A running agent step heartbeats every second while it runs (agent/common/heartbeating.ts),
// so Temporal retries a step whose agent died after its heartbeat timeout, not its whole
// timeout; each beat carries the step's latest progress, and the beats stop when it ends.
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { heartbeating, reportProgress } from '../../agent/common/heartbeating';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a running agent step', () => {
  it('heartbeats every second with its latest progress, and stops when it ends', async () => {
    const env = new MockActivityEnvironment();
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
    // The first beat at once, one a second (two in 2.6 s), and the progress beat itself.
    expect(beats.length).toBeGreaterThanOrEqual(4);
    expect(beats[0]).toBeUndefined();
    expect(beats.indexOf(undefined, 1)).toBe(1); // a beat before any progress carries none
    const afterProgress = beats.slice(beats.findIndex((b) => b !== undefined));
    expect(afterProgress.length).toBeGreaterThanOrEqual(2);
    for (const details of afterProgress) expect(details).toEqual({ disk: 'vda', percent: 40 });
  });

  it('reports progress outside an activity as nothing, without throwing', () => {
    expect(() => reportProgress({ disk: 'vda' })).not.toThrow();
  });
});
