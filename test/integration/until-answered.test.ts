// An agent's request the control plane answers too late is sent again until the step's deadline
// (agent/common/until-answered.ts), and a heartbeat waits for a late answer instead of sending
// again (core/agent-queues.ts HEARTBEAT_ANSWER_WAIT_MS), against a real HTTP server that holds
// or delays its answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentLog } from '../../agent/common/log';
import { RamdiskHeartbeat } from '../../agent/ramdisk/heartbeat';
import { ControlPlaneClient, ControlPlaneUnreachable } from '../../agent/common/control-plane-client';
import { untilAnswered } from '../../agent/common/until-answered';
import { IronflowError } from '../../core/errors';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A control plane that answers request n with `answer(n)` after `delayMs`, or never when it gives undefined. */
async function controlPlane(
  answer: (n: number) => { status: number; body: unknown } | undefined,
  delayMs = 0,
): Promise<{ client: ControlPlaneClient; requests: () => number }> {
  let requests = 0;
  server = createServer((req, res) => {
    const reply = answer(++requests);
    req.resume();
    if (!reply) return; // held: the client's timeout ends it
    setTimeout(() => res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body)), delayMs);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // A 300 ms client: each held request counts as one the control plane did not answer.
  return { client: new ControlPlaneClient(`http://127.0.0.1:${port}`, 300), requests: () => requests };
}

/** An unsigned POST with this attempt's wait (the signed form differs only in its headers). */
const post = (client: ControlPlaneClient, path: string, timeoutMs: number) => client.post(path, {}, timeoutMs);

describe('a request the control plane does not answer', () => {
  it('is sent again, backing off, until it is answered', async () => {
    const cp = await controlPlane((n) => (n <= 2 ? undefined : { status: 200, body: { operation: null } }));
    const retries: number[] = [];
    const answer = await untilAnswered((timeoutMs) => post(cp.client, '/v1/agents/bmc-operations/get', timeoutMs), {
      deadline: Date.now() + 30_000,
      firstTimeoutMs: cp.client.timeoutMs,
      onRetry: (r) => retries.push(r.attempt),
    });
    expect(answer).toEqual({ operation: null });
    expect(cp.requests()).toBe(3);
    expect(retries).toEqual([1, 2]);
  });

  it('waits longer each time: a slow control plane is asked again once, not flooded', async () => {
    // Every answer takes 450 ms: the first 300 ms wait gives up, the second (600 ms) gets it.
    const cp = await controlPlane(() => ({ status: 200, body: { ok: true } }), 450);
    const waits: number[] = [];
    const answer = await untilAnswered(
      (timeoutMs) => {
        waits.push(timeoutMs);
        return post(cp.client, '/v1/agents/session', timeoutMs);
      },
      { deadline: Date.now() + 30_000, firstTimeoutMs: cp.client.timeoutMs },
    );
    expect(answer).toEqual({ ok: true });
    // Each wait twice the one before (on a loaded machine the 600 ms one may miss too).
    expect(waits.slice(0, 2)).toEqual([300, 600]);
    waits.slice(1).forEach((wait, i) => expect(wait).toBe(Math.min(30_000, (waits[i] as number) * 2)));
    expect(cp.requests()).toBe(waits.length);
  });

  it('fails as unreachable when the deadline comes first', async () => {
    const cp = await controlPlane(() => undefined);
    const given = untilAnswered((timeoutMs) => post(cp.client, '/v1/agents/bmc-access', timeoutMs), { deadline: Date.now() + 2_000, firstTimeoutMs: 300 });
    await expect(given).rejects.toBeInstanceOf(ControlPlaneUnreachable);
    // Waits of 300 and 600 ms with a 0.5 s pause between: a third pause (1 s) would end past
    // the deadline, so no third request is sent (a slow machine may fit only one).
    expect(cp.requests()).toBeGreaterThanOrEqual(1);
    expect(cp.requests()).toBeLessThanOrEqual(2);
  });

  it('an answer, even a refusal, is never asked again', async () => {
    const cp = await controlPlane(() => ({ status: 409, body: { error: { code: 'CONFLICT', message: 'operation moved', details: {} } } }));
    const refused = untilAnswered((timeoutMs) => post(cp.client, '/v1/agents/bmc-operations/put', timeoutMs), {
      deadline: Date.now() + 30_000,
      firstTimeoutMs: 300,
    });
    await expect(refused).rejects.toBeInstanceOf(IronflowError);
    await expect(refused).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(cp.requests()).toBe(1);
  });
});

describe('a heartbeat the control plane answers late', () => {
  it('waits for the answer past the client’s usual wait instead of sending the heartbeat again', async () => {
    // Answers take 1 s; the client's usual wait is 300 ms (5 s for real agents, whose answers took longer under load).
    const cp = await controlPlane(() => ({ status: 200, body: { heartbeatIntervalMs: 60_000 } }), 1_000);
    const lines: string[] = [];
    const signer = { key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, certificatePem: () => 'unused by this server' };
    const heartbeat = new RamdiskHeartbeat(cp.client, signer, new AgentLog((line) => void lines.push(line)));
    try {
      await heartbeat.started();
      expect(cp.requests()).toBe(1);
      expect(lines.join('')).not.toContain('heartbeat failed');
    } finally {
      heartbeat.stop();
    }
  });
});
