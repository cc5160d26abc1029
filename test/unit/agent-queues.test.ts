import { describe, expect, it } from 'vitest';
import { AGENT_SESSION_FRESH_MS, isConnected, sessionIntervalMsFor } from '../../core/agent-queues';

const at = new Date('2026-12-01T12:00:00Z');
const later = (ms: number) => at.getTime() + ms;

describe("agents' sessions", () => {
  it('beat every 5 s for site agents and ramdisks, every 15 s for installed nodes’ agents', () => {
    expect(sessionIntervalMsFor('site')).toBe(5_000);
    expect(sessionIntervalMsFor('ramdisk')).toBe(5_000);
    expect(sessionIntervalMsFor('node')).toBe(15_000);
  });

  it('count as connected for three of their intervals, so two missed beats leave them connected', () => {
    expect(isConnected(at, later(AGENT_SESSION_FRESH_MS - 1), 'site')).toBe(true);
    expect(isConnected(at, later(AGENT_SESSION_FRESH_MS), 'site')).toBe(false);
    expect(isConnected(at, later(AGENT_SESSION_FRESH_MS), 'ramdisk')).toBe(false);
    expect(isConnected(at, later(44_999), 'node')).toBe(true);
    expect(isConnected(at, later(45_000), 'node')).toBe(false);
  });
});
