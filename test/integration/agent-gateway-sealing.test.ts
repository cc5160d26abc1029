// Sealed histories reach agents' steps through the gateway: the agent polls a step input it
// can read and completes it with a plain result, while what Temporal stores for both is
// ciphertext; the control plane (holding the history keys) reads them back. The agent holds
// no key.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteAgentQueue } from '../../core/agent-queues';
import { newId } from '../../services/ids';
import { SEALED_ENCODING } from '../../services/sealing';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { newKeyAndCsr, workDir } from '../helpers/openssl';
import { createNode, keepSessions } from '../helpers/provision';

let t: TestControlPlane;
let sessions: { stop(): Promise<void> } | undefined;
const connections: Connection[] = [];

beforeAll(async () => {
  t = await startTestControlPlane({ config: await testConfig({ IRONFLOW_SEAL_HISTORIES: 'true' }) });
});
afterAll(async () => {
  for (const c of connections) await c.close().catch(() => undefined);
  await sessions?.stop();
  await t?.close();
});

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('latin1');

describe('an agent step under sealed histories', () => {
  it('is plaintext to the agent that runs it and ciphertext in Temporal', async () => {
    const siteId = (
      await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-seal', idempotencyKey: 'seal-site' })
    ).id;
    const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
    const dir = workDir();
    const csr = newKeyAndCsr(dir, 'sealed-agent', 'ec');
    const agent = await t.anonymous.call<{ nodeId: string; certificateChain: string[]; temporal: { address: string; serverName: string; taskQueue: string } }>(
      'POST',
      '/v1/join',
      { token: minted.token, csr },
    );
    sessions = keepSessions(t.cp.db, [{ nodeId: agent.nodeId, siteId, role: 'site', taskQueue: siteAgentQueue(siteId, agent.nodeId) }]);
    await t.cp.db.bootLease.create({ data: { siteId, holderNodeId: agent.nodeId, epoch: 1, expiresAt: new Date(Date.now() + 3_600_000) } });

    const nodeId = newId('node');
    await createNode(t.cp.db, { nodeId, siteId });
    await t.root.call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: {
        id: 'sealed-probe',
        version: 1,
        target: 'metal',
        steps: [{ use: 'management.setBootDevice', on: 'site', with: { device: 'pxe' }, timeout: '60s' }],
      },
    });
    const { workflowId } = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/sealed-probe/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'inspecting',
    });

    const connection = await Connection.connect({
      address: agent.temporal.address,
      tls: {
        serverNameOverride: agent.temporal.serverName,
        serverRootCACertificate: Buffer.from(agent.certificateChain[1] as string),
        clientCertPair: { crt: Buffer.from(agent.certificateChain.join('')), key: readFileSync(path.join(dir, 'sealed-agent.key')) },
      },
    });
    connections.push(connection);
    const namespace = t.config.temporal.namespace;
    const task = await connection.withDeadline(Date.now() + 70_000, () =>
      connection.workflowService.pollActivityTaskQueue({ namespace, taskQueue: { name: agent.temporal.taskQueue } }),
    );
    // The agent reads its input as the SDK wrote it, with no key.
    const input = task.input?.payloads?.[0];
    expect(text(input?.metadata?.encoding)).toBe('json/plain');
    expect(text(input?.data)).toContain(nodeId);
    const result = { payloads: [defaultPayloadConverter.toPayload({ device: 'result-sealed-marker' })] };
    await connection.workflowService.respondActivityTaskCompleted({ namespace, taskToken: task.taskToken, result });
    const outcome = await t.cp.temporal.workflow.getHandle(workflowId).result();
    expect(JSON.stringify(outcome)).toContain('result-sealed-marker');

    // Temporal's own store, read without the codec: the step's input and result are sealed.
    const rawConnection = await Connection.connect({ address: t.config.temporal.address });
    connections.push(rawConnection);
    const raw = new Client({ connection: rawConnection, namespace });
    const history = await raw.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'management.setBootDevice',
    )?.activityTaskScheduledEventAttributes;
    const completed = events.find((e) => e.activityTaskCompletedEventAttributes)?.activityTaskCompletedEventAttributes;
    for (const payload of [...(scheduled?.input?.payloads ?? []), ...(completed?.result?.payloads ?? [])])
      expect(text(payload.metadata?.encoding)).toBe(SEALED_ENCODING);
    expect(completed?.result?.payloads?.length).toBe(1);
    const everything = JSON.stringify(events.map((e) => ({ ...e, raw: text(Buffer.from(JSON.stringify(e))) })));
    // The node id is in the step's input (and readable in ids and search attributes, by design): look in the payloads only.
    const payloadBytes = [...(scheduled?.input?.payloads ?? []), ...(completed?.result?.payloads ?? [])].map((p) => text(p.data)).join('');
    expect(payloadBytes).not.toContain(nodeId);
    for (const marker of ['result-sealed-marker']) {
      expect(everything).not.toContain(marker);
      expect(everything).not.toContain(Buffer.from(marker).toString('base64'));
    }
  });
});
