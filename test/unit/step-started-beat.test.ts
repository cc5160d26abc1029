// The control-plane worker's activity interceptor beats a step of one attempt with a heartbeat
// timeout as it starts, as agents do (core/step-started.ts), so the workflow can tell a lost
// control-queue task from one that ran; steps with retries, without a heartbeat timeout, and
// local activities send no beat.
import type { Context } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { STEP_STARTED } from '../../core/step-started';
import { stepStartedBeatInterceptor } from '../../worker/step-started-beat';

async function beatsOf(info: { isLocal: boolean; retryPolicy?: { maximumAttempts: number }; heartbeatTimeoutMs?: number }): Promise<unknown[]> {
  const beats: unknown[] = [];
  const ctx = { info, heartbeat: (details: unknown) => beats.push(details) } as unknown as Context;
  const interceptor = stepStartedBeatInterceptor(ctx);
  const result = await interceptor.inbound?.execute?.({ args: [], headers: {} }, async () => 'ran');
  expect(result).toBe('ran');
  return beats;
}

describe('a control-queue step as it starts', () => {
  it('beats once when it has one attempt and a heartbeat timeout', async () => {
    expect(await beatsOf({ isLocal: false, retryPolicy: { maximumAttempts: 1 }, heartbeatTimeoutMs: 60_000 })).toEqual([STEP_STARTED]);
  });

  it('sends no beat with retries, without a heartbeat timeout, or as a local activity', async () => {
    expect(await beatsOf({ isLocal: false, retryPolicy: { maximumAttempts: 3 }, heartbeatTimeoutMs: 60_000 })).toEqual([]);
    expect(await beatsOf({ isLocal: false, retryPolicy: { maximumAttempts: 1 } })).toEqual([]);
    expect(await beatsOf({ isLocal: true, retryPolicy: { maximumAttempts: 1 }, heartbeatTimeoutMs: 60_000 })).toEqual([]);
  });
});
