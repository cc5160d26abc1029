// An agent's closed connection costs the process nothing afterwards. The SDK's worker runs each
// activity inside the connection's AsyncLocalStorage (worker/lib/activity.js executeWithClient:
// connection.withAbortSignal) and leaves it enabled after close; while enabled, Node 20 gives
// every async resource the process makes one more property for it, and runs a hook for it on
// every promise. closeGatewayConnection disables it: the count of those properties on a fresh
// resource is back where it was.
import { executionAsyncResource } from 'node:async_hooks';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { closeGatewayConnection } from '../../agent/common/gateway-connection';

/** Properties a fresh async resource carries: one per enabled AsyncLocalStorage in the process. */
const perResource = () => new Promise<number>((resolve) => setImmediate(() => resolve(Object.getOwnPropertySymbols(executionAsyncResource()).length)));

describe("an agent's connection, closed", () => {
  it('leaves no AsyncLocalStorage enabled for every later promise to pay for', async () => {
    const before = await perResource();
    const connections = await Promise.all([1, 2, 3].map(() => NativeConnection.connect({ address: inject('temporalAddress') })));
    // What the worker does around each activity it runs.
    for (const connection of connections) await connection.withAbortSignal(new AbortController().signal, async () => undefined);
    expect(await perResource()).toBe(before + 3);

    for (const connection of connections) await closeGatewayConnection(connection);
    expect(await perResource()).toBe(before);
  });
});
