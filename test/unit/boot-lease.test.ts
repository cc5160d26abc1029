import { describe, expect, it } from 'vitest';
import { BOOT_LEASE_TTL_MS, decideBootLease, leaseViewFor, type LeaseState } from '../../core/boot-lease/decide';

const t0 = new Date('2026-11-29T12:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const none: LeaseState = { holderNodeId: null, epoch: 0, expiresAt: null };

describe('the boot lease', () => {
  it('goes to the first connected agent by node id, at epoch 1', () => {
    const d = decideBootLease(
      none,
      [
        { nodeId: 'node_b', connected: true },
        { nodeId: 'node_a', connected: true },
        { nodeId: 'node_0', connected: false },
      ],
      t0,
    );
    expect(d.change).toBe('acquired');
    expect(d.next).toEqual({ holderNodeId: 'node_a', epoch: 1, expiresAt: at(BOOT_LEASE_TTL_MS) });
  });

  it('is renewed while its holder is connected, at the same epoch', () => {
    const held: LeaseState = { holderNodeId: 'node_b', epoch: 3, expiresAt: at(5_000) };
    const d = decideBootLease(
      held,
      [
        { nodeId: 'node_a', connected: true },
        { nodeId: 'node_b', connected: true },
      ],
      at(4_000),
    );
    expect(d.change).toBe('renewed');
    expect(d.next).toEqual({ holderNodeId: 'node_b', epoch: 3, expiresAt: at(4_000 + BOOT_LEASE_TTL_MS) });
  });

  it('stays with a disconnected holder until it expires, never earlier', () => {
    const held: LeaseState = { holderNodeId: 'node_a', epoch: 1, expiresAt: at(BOOT_LEASE_TTL_MS) };
    const standby = [
      { nodeId: 'node_a', connected: false },
      { nodeId: 'node_b', connected: true },
    ];
    expect(decideBootLease(held, standby, at(BOOT_LEASE_TTL_MS - 1)).change).toBe('kept');
    const d = decideBootLease(held, standby, at(BOOT_LEASE_TTL_MS));
    expect(d.change).toBe('promoted');
    expect(d.next.holderNodeId).toBe('node_b');
    expect(d.next.epoch).toBe(2);
  });

  it('is released when no agent is left, and the epoch still moves on', () => {
    const held: LeaseState = { holderNodeId: 'node_a', epoch: 4, expiresAt: at(0) };
    const d = decideBootLease(held, [{ nodeId: 'node_a', connected: false }], at(1));
    expect(d.change).toBe('released');
    expect(d.next).toEqual({ holderNodeId: null, epoch: 5, expiresAt: null });
    // The first agent back takes it under yet another epoch.
    const back = decideBootLease(d.next, [{ nodeId: 'node_a', connected: true }], at(2));
    expect(back.change).toBe('acquired');
    expect(back.next.epoch).toBe(6);
  });

  it('does nothing with no holder and no agent', () => {
    expect(decideBootLease(none, [], t0)).toEqual({ next: none, change: 'idle' });
  });

  it('tells an agent it is active only while it holds a live lease', () => {
    const held: LeaseState = { holderNodeId: 'node_a', epoch: 2, expiresAt: at(10) };
    expect(leaseViewFor('node_a', held, at(0)).active).toBe(true);
    expect(leaseViewFor('node_b', held, at(0)).active).toBe(false);
    expect(leaseViewFor('node_a', held, at(10)).active).toBe(false);
    expect(leaseViewFor('node_a', null, at(0))).toEqual({ active: false, epoch: 0, holderNodeId: null, expiresAt: null });
  });
});
