// An agent's request the control plane answers too late is sent again until the step's deadline
// (agent/common/until-answered.ts), against a real HTTP server that holds its first answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlPlaneClient, ControlPlaneUnreachable } from '../../agent/common/control-plane-client';
import { untilAnswered } from '../../agent/common/until-answered';
import { IronflowError } from '../../core/errors';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A control plane that answers request n with `answer(n)`, or never when it gives undefined. */
async function controlPlane(
  answer: (n: number) => { status: number; body: unknown } | undefined,
): Promise<{ client: ControlPlaneClient; requests: () => number }> {
  let requests = 0;
  server = createServer((req, res) => {
    const reply = answer(++requests);
    req.resume();
    if (!reply) return; // held: the client's timeout ends it
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // A 300 ms client: each held request counts as one the control plane did not answer.
  return { client: new ControlPlaneClient(`http://127.0.0.1:${port}`, 300), requests: () => requests };
}

describe('a request the control plane does not answer', () => {
  it('is sent again, backing off, until it is answered', async () => {
    const cp = await controlPlane((n) => (n <= 2 ? undefined : { status: 200, body: { operation: null } }));
    const retries: number[] = [];
    const answer = await untilAnswered(
      () => cp.client.post('/v1/agents/bmc-operations/get', {}),
      Date.now() + 30_000,
      (r) => retries.push(r.attempt),
    );
    expect(answer).toEqual({ operation: null });
    expect(cp.requests()).toBe(3);
    expect(retries).toEqual([1, 2]);
  });

  it('fails as unreachable when the deadline comes first', async () => {
    const cp = await controlPlane(() => undefined);
    await expect(untilAnswered(() => cp.client.post('/v1/agents/bmc-access', {}), Date.now() + 2_000)).rejects.toBeInstanceOf(ControlPlaneUnreachable);
    // 300 ms each, backing off 0.5 s, 1 s: no request starts after the deadline.
    expect(cp.requests()).toBeGreaterThanOrEqual(2);
    expect(cp.requests()).toBeLessThanOrEqual(3);
  });

  it('an answer, even a refusal, is never asked again', async () => {
    const cp = await controlPlane(() => ({ status: 409, body: { error: { code: 'CONFLICT', message: 'operation moved', details: {} } } }));
    const refused = untilAnswered(() => cp.client.post('/v1/agents/bmc-operations/put', {}), Date.now() + 30_000);
    await expect(refused).rejects.toBeInstanceOf(IronflowError);
    await expect(refused).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(cp.requests()).toBe(1);
  });
});
