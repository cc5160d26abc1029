// Agents' connections share one call-context storage. The SDK's worker runs each activity inside
// its connection's AsyncLocalStorage (worker/lib/activity.js executeWithClient:
// connection.withAbortSignal), which enables it for good, closed or not; while enabled, Node 20
// gives every async resource the process makes one more property for it, and runs a hook for it
// on every promise. A process hosting many agents (the emulated fleet's site) would pay once per
// connection: shared, it pays once. Each call still reads its own async chain's context.
import { executionAsyncResource } from 'node:async_hooks';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { sharingCallContext } from '../../agent/common/gateway-connection';

/** Properties a fresh async resource carries: one per enabled AsyncLocalStorage in the process. */
const perResource = () => new Promise<number>((resolve) => setImmediate(() => resolve(Object.getOwnPropertySymbols(executionAsyncResource()).length)));

describe("agents' connections", () => {
  const connections: NativeConnection[] = [];
  const connect = async () => sharingCallContext(await NativeConnection.connect({ address: inject('temporalAddress') }));
  afterAll(async () => {
    for (const connection of connections) await connection.close();
  });

  it('enable one AsyncLocalStorage between them, however many run activities or close', async () => {
    // What the worker does around each activity it runs.
    const runActivity = (connection: NativeConnection) => connection.withAbortSignal(new AbortController().signal, async () => undefined);
    const before = await perResource();
    connections.push(await connect());
    await runActivity(connections[0] as NativeConnection);
    // One more, or none when an earlier test file of this worker process ran an agent.
    const shared = await perResource();
    expect(shared - before).toBeLessThanOrEqual(1);

    connections.push(await connect(), await connect());
    for (const connection of connections) await runActivity(connection);
    expect(await perResource()).toBe(shared);
    const closing = connections.splice(0, 2);
    for (const connection of closing) await connection.close();
    connections.push(await connect());
    for (const connection of connections) await runActivity(connection);
    expect(await perResource()).toBe(shared);
  });

  it("give each activity's calls that activity's own signal, side by side", async () => {
    const [first, second] = [await connect(), await connect()];
    connections.push(first, second);
    const signals = [new AbortController().signal, new AbortController().signal] as const;
    const seen = await Promise.all(
      [first, second].map((connection, i) =>
        connection.withAbortSignal(signals[i] as AbortSignal, async () => {
          await new Promise((resolve) => setTimeout(resolve, 20)); // both contexts open at once
          return connection.callContextStorage.getStore()?.abortSignal;
        }),
      ),
    );
    expect(seen[0]).toBe(signals[0]);
    expect(seen[1]).toBe(signals[1]);
    expect(first.callContextStorage.getStore()).toBeUndefined();
  });
});
