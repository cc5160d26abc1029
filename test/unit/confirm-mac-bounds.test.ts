// What a caller's confirmMac input can grow: the refusal quotes at most 40 characters of it,
// and a workflow's status keeps the last 20 refused signals, however many arrive.
import { describe, expect, it } from 'vitest';
import { malformedMacMessage } from '../../core/mac';
import { MAX_REJECTED_SIGNALS, noteRejectedSignal } from '../../workflows/confirm-mac-handlers';

describe('confirmMac bounds', () => {
  it('quotes a malformed MAC at most 40 characters long, and names a non-string by its type', () => {
    const message = malformedMacMessage('x'.repeat(1_000_000));
    expect(message.length).toBeLessThan(120);
    expect(message).toContain(`"${'x'.repeat(40)}…"`);
    expect(malformedMacMessage(42)).toMatch(/^a number is not a unicast MAC/);
    expect(malformedMacMessage(null)).toMatch(/^a null is not/);
    expect(malformedMacMessage('not-a-mac')).toBe('"not-a-mac" is not a unicast MAC address (aa:bb:cc:dd:ee:ff)');
  });

  it('keeps the newest refused signals only', () => {
    const list: Array<{ name: string; reason: string }> = [];
    for (let i = 0; i < 1000; i++) noteRejectedSignal(list, { name: 'confirmMac', reason: `r${i}` });
    expect(list).toHaveLength(MAX_REJECTED_SIGNALS);
    expect(list[0]?.reason).toBe(`r${1000 - MAX_REJECTED_SIGNALS}`);
    expect(list.at(-1)?.reason).toBe('r999');
  });
});
