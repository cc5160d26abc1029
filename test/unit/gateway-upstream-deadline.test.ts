import { describe, expect, it } from 'vitest';
import { DELIVERY_MARGIN_MS, MAX_CALL_MS, upstreamDeadline } from '../../gateway/upstream-deadline';

const now = 1_800_000_000_000;

describe("the agent gateway's deadline toward Temporal", () => {
  it('keeps the delivery margin back from a long poll, so a task handed out at its end still reaches the agent', () => {
    expect(upstreamDeadline(now + 70_000, now)).toBe(now + 70_000 - DELIVERY_MARGIN_MS);
  });

  it('keeps a tenth of a short call back', () => {
    expect(upstreamDeadline(now + 10_000, now)).toBe(now + 9_000);
  });

  it('caps a call that asked for no deadline or a longer one', () => {
    expect(upstreamDeadline(Infinity, now)).toBe(now + MAX_CALL_MS - DELIVERY_MARGIN_MS);
    expect(upstreamDeadline(now + 3 * MAX_CALL_MS, now)).toBe(now + MAX_CALL_MS - DELIVERY_MARGIN_MS);
  });

  it('answers now for a call whose deadline has passed', () => {
    expect(upstreamDeadline(now - 1_000, now)).toBe(now);
  });
});
