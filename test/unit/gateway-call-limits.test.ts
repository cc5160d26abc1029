// The agent gateway's bound on open calls per identity: a machine agent's (ramdisk, node) 32,
// a site agent's 256 (its worker runs up to 100 commands at once, each heartbeating, beside its
// polls); a call that ends frees its place.
import { describe, expect, it } from 'vitest';
import { callLimitFor, InFlightCalls, type OpenCall } from '../../gateway/in-flight-calls';

const call = (): OpenCall => ({ cutOff: () => undefined });

describe('open calls per identity', () => {
  it.each([
    ['ramdisk', 32],
    ['node', 32],
    ['site', 256],
  ])('a %s identity may hold %i, not one more, and a closed call frees its place', (role, limit) => {
    expect(callLimitFor(role)).toBe(limit);
    const calls = new InFlightCalls();
    const open = Array.from({ length: limit }, call);
    for (const c of open) expect(calls.open('fp', c, callLimitFor(role))).toBe(true);
    expect(calls.open('fp', call(), callLimitFor(role))).toBe(false);
    // Another identity is counted apart.
    expect(calls.open('other', call(), callLimitFor(role))).toBe(true);
    calls.close('fp', open[0] as OpenCall);
    expect(calls.open('fp', call(), callLimitFor(role))).toBe(true);
  });
});
