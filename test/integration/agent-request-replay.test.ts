// Signed agent requests are once-only: a request captured off the wire and sent again within
// the clock-skew window is refused (UNAUTHENTICATED, reason replayed-request) with a security
// event, whichever API process of the control plane it reaches; fresh requests by the real
// agent client keep working, several in the same millisecond included.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { AGENT_HEADERS, signAgentRequest } from '../../services/pki/agent-request';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { newKeyAndCsr, workDir } from '../helpers/openssl';

let t: TestControlPlane;
/** A second API process on the same database (no worker): what one process saw, the other knows. */
let second: TestControlPlane;
let agent: { nodeId: string; key: KeyObject; certificate: string };

beforeAll(async () => {
  t = await startTestControlPlane();
  second = await startTestControlPlane({ config: t.config, worker: false });
  const site = await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-1', idempotencyKey: 'replay-site' });
  const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${site.id}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, 'replay', 'ec');
  const joined = await t.anonymous.call<{ nodeId: string; certificateChain: string[] }>('POST', '/v1/join', { token: minted.token, csr });
  agent = {
    nodeId: joined.nodeId,
    key: createPrivateKey({ key: readFileSync(path.join(dir, 'replay.key')) }),
    certificate: joined.certificateChain[0] as string,
  };
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

async function send(baseUrl: string, headers: Record<string, string>, body: string) {
  const res = await fetch(new URL('/v1/agents/session', baseUrl), { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; details: { reason?: string } } } };
}

const replayEvents = async () =>
  (await t.cp.db.event.findMany({ where: { type: 'security.agent.refused', subjectId: agent.nodeId } })).filter(
    (e) => (e.data as { reason?: string }).reason === 'replayed-request',
  );

describe('signed agent requests', () => {
  it('are refused when replayed, on the same API process and on another', async () => {
    const body = JSON.stringify({ agentVersion: 'replay-test' });
    const headers = signAgentRequest(agent.key, agent.certificate, { method: 'POST', pathAndQuery: '/v1/agents/session', body });
    expect((await send(t.cp.url, headers, body)).status).toBe(200);

    const again = await send(t.cp.url, headers, body);
    expect(again.status).toBe(401);
    expect(again.body.error?.code).toBe('UNAUTHENTICATED');
    expect(again.body.error?.details.reason).toBe('replayed-request');

    const elsewhere = await send(second.cp.url, headers, body);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.error?.details.reason).toBe('replayed-request');

    const events = await replayEvents();
    expect(events).toHaveLength(2);
    expect(events[0]?.tenantId).toBe('root');
    // The event names the request, never its signature.
    expect(JSON.stringify(events[0]?.data)).not.toContain(headers[AGENT_HEADERS.signature]);
  });

  it('are refused without a request id', async () => {
    const body = '{}';
    const headers = signAgentRequest(agent.key, agent.certificate, { method: 'POST', pathAndQuery: '/v1/agents/session', body });
    const { [AGENT_HEADERS.nonce]: _dropped, ...withoutNonce } = headers;
    const res = await send(t.cp.url, withoutNonce, body);
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('UNAUTHENTICATED');
  });

  it('are refused when the request id is swapped (it is signed)', async () => {
    const body = '{}';
    const headers = signAgentRequest(agent.key, agent.certificate, { method: 'POST', pathAndQuery: '/v1/agents/session', body });
    const other = signAgentRequest(agent.key, agent.certificate, { method: 'POST', pathAndQuery: '/v1/agents/session', body });
    const res = await send(t.cp.url, { ...headers, [AGENT_HEADERS.nonce]: other[AGENT_HEADERS.nonce] as string }, body);
    expect(res.status).toBe(401);
    expect(res.body.error?.details.reason).toBe('agent-signature');
  });

  it('keep working for the agent client, several in the same millisecond', async () => {
    const client = new ControlPlaneClient(t.cp.url);
    const signer = { key: agent.key, certificatePem: () => agent.certificate };
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => client.signedPost<{ nodeId: string }>(signer, '/v1/agents/session', { agentVersion: 'replay-test' })),
    );
    for (const answer of answers) expect(answer.nodeId).toBe(agent.nodeId);
    const now = Date.now();
    const sameInstant = [1, 2].map(() =>
      signAgentRequest(agent.key, agent.certificate, { method: 'POST', pathAndQuery: '/v1/agents/session', body: '{}', now }),
    );
    for (const headers of sameInstant) expect((await send(t.cp.url, headers, '{}')).status).toBe(200);
  });
});
