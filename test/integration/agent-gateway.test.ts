// The agent gateway, probed as an attacker holding a real agent certificate would: with the
// Temporal client's own gRPC stubs over mTLS, not through Ironflow's agent code. An agent
// may poll its own queue and heartbeat/complete the tasks it polled; every other call is
// PERMISSION_DENIED with a security event; a revoked identity loses even a long poll in
// flight; a connection without a node-CA certificate never gets a session.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCEPTED_FOR_MS } from '../../gateway/agent-identities';
import { siteAgentQueue } from '../../core/agent-queues';
import { newId } from '../../services/ids';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { newKeyAndCsr, workDir } from '../helpers/openssl';
import { makeServerCertificate } from '../helpers/tls';
import { metricsValue } from '../helpers/metrics';
import { createNode, keepSessions, until } from '../helpers/provision';

interface Joined {
  nodeId: string;
  chain: string[];
  key: string;
  temporal: { address: string; namespace: string; taskQueue: string; serverName: string };
}

let t: TestControlPlane;
let siteId: string;
let agentA: Joined;
let agentB: Joined;
const connections: Connection[] = [];
let sessions: { stop(): Promise<void> };

async function join(name: string): Promise<Joined> {
  const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  const dir = workDir();
  const csr = newKeyAndCsr(dir, name, 'ec');
  const answer = await t.anonymous.call<{ nodeId: string; certificateChain: string[]; temporal: Joined['temporal'] }>('POST', '/v1/join', {
    token: minted.token,
    csr,
  });
  return { nodeId: answer.nodeId, chain: answer.certificateChain, key: readFileSync(path.join(dir, `${name}.key`), 'utf8'), temporal: answer.temporal };
}

/** Temporal's frontend refuses a long poll without a deadline; the SDK's worker sets one too. */
const polling = <T>(connection: Connection, call: () => Promise<T>): Promise<T> => connection.withDeadline(Date.now() + 70_000, call);

/** Temporal's own client stubs, dialing the gateway with an agent's certificate. */
async function connectAs(agent: Joined, options: { withCertificate?: boolean } = {}): Promise<Connection> {
  const connection = await Connection.connect({
    address: agent.temporal.address,
    connectTimeout: 5_000,
    tls: {
      serverNameOverride: agent.temporal.serverName,
      serverRootCACertificate: Buffer.from(agent.chain[agent.chain.length - 1] as string),
      ...(options.withCertificate === false ? {} : { clientCertPair: { crt: Buffer.from(agent.chain.join('')), key: Buffer.from(agent.key) } }),
    },
  });
  connections.push(connection);
  return connection;
}

const grpcCode = async (call: Promise<unknown>): Promise<number | 'ok'> =>
  call.then(
    () => 'ok' as const,
    (error: { code?: number }) => error.code ?? -1,
  );

const RESOURCE_EXHAUSTED = 8;
const PERMISSION_DENIED = 7;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;

const refusals = async (nodeId: string) =>
  (await t.cp.db.event.findMany({ where: { type: 'security.gateway.refused', subjectId: nodeId } })).map((e) => e.data as { method?: string; reason?: string });

beforeAll(async () => {
  t = await startTestControlPlane();
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-gw', idempotencyKey: 'gateway-site' })).id;
  agentA = await join('agent-a');
  agentB = await join('agent-b');
  // A holds the site's boot lease, so the site step below is routed to A's queue.
  sessions = keepSessions(t.cp.db, [{ nodeId: agentA.nodeId, siteId, role: 'site', taskQueue: siteAgentQueue(siteId, agentA.nodeId) }]);
  await t.cp.db.bootLease.create({ data: { siteId, holderNodeId: agentA.nodeId, epoch: 1, expiresAt: new Date(Date.now() + 3_600_000) } });
});

afterAll(async () => {
  for (const c of connections) await c.close().catch(() => undefined);
  await sessions?.stop();
  await t?.close();
});

describe('the agent gateway', () => {
  it('is what Join names, not the Temporal frontend', () => {
    expect(agentA.temporal.address).toBe(t.cp.gateway.address);
    expect(agentA.temporal.address).not.toBe(t.config.temporal.address);
    expect(agentA.temporal.taskQueue).toBe(siteAgentQueue(siteId, agentA.nodeId));
  });

  it('lets an agent poll its own queue and complete what it polled, and no other agent', async () => {
    const nodeId = newId('node');
    await createNode(t.cp.db, { nodeId, siteId });
    await t.root.call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: {
        id: 'gateway-probe',
        version: 1,
        target: 'metal',
        steps: [{ use: 'management.setBootDevice', on: 'site', with: { device: 'pxe' }, timeout: '60s' }],
      },
    });
    const { workflowId } = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/gateway-probe/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'inspecting',
    });

    const connectionA = await connectAs(agentA);
    const a = connectionA.workflowService;
    const b = (await connectAs(agentB)).workflowService;
    const namespace = t.config.temporal.namespace;
    const queueOfA = { name: agentA.temporal.taskQueue };

    // B may not poll A's queue.
    expect(await grpcCode(b.pollActivityTaskQueue({ namespace, taskQueue: queueOfA, identity: 'b' }))).toBe(PERMISSION_DENIED);

    const task = await polling(connectionA, () => a.pollActivityTaskQueue({ namespace, taskQueue: queueOfA, identity: 'claims-to-be-someone-else' }));
    expect(task.activityType?.name).toBe('management.setBootDevice');
    const taskToken = task.taskToken as Uint8Array;

    // B holds A's task token (a leak, say): its heartbeat and forged result are refused.
    const forged = { payloads: [defaultPayloadConverter.toPayload({ forged: true })] };
    expect(await grpcCode(b.recordActivityTaskHeartbeat({ namespace, taskToken, identity: 'b' }))).toBe(PERMISSION_DENIED);
    expect(await grpcCode(b.respondActivityTaskCompleted({ namespace, taskToken, result: forged, identity: 'b' }))).toBe(PERMISSION_DENIED);

    const result = { payloads: [defaultPayloadConverter.toPayload({ device: 'pxe', done: true })] };
    expect(await grpcCode(a.respondActivityTaskCompleted({ namespace, taskToken, result, identity: 'a' }))).toBe('ok');
    const outcome = (await t.cp.temporal.workflow.getHandle(workflowId).result()) as { outputs: Record<string, unknown> };
    expect(JSON.stringify(outcome.outputs)).toContain('"done":true');
    expect(JSON.stringify(outcome.outputs)).not.toContain('forged');

    // The history names the identity the certificate proves, not the one the request claimed.
    const history = await t.cp.temporal.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'management.setBootDevice');
    const scheduledId = String(scheduled?.eventId);
    const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === scheduledId);
    const completed = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === scheduledId);
    expect(started?.activityTaskStartedEventAttributes?.identity).toBe(`site:${agentA.nodeId}`);
    expect(completed?.activityTaskCompletedEventAttributes?.identity).toBe(`site:${agentA.nodeId}`);

    // Events are written after the refusal is answered: wait for them.
    const expected = [
      'PollActivityTaskQueue:wrong-task-queue',
      'RecordActivityTaskHeartbeat:task-of-another-agent',
      'RespondActivityTaskCompleted:task-of-another-agent',
    ];
    const recorded = await until(
      () => refusals(agentB.nodeId),
      (r) => expected.every((e) => r.some((x) => `${x.method}:${x.reason}` === e)),
      10_000,
      'refusal events of agent B',
    );
    expect(recorded.map((r) => `${r.method}:${r.reason}`)).toEqual(expect.arrayContaining(expected));
  });

  it("refuses everything but an activity worker's calls, with a security event each", async () => {
    const a = (await connectAs(agentA)).workflowService;
    const namespace = t.config.temporal.namespace;
    const execution = { workflowId: `node:${agentB.nodeId}` };
    const probes: Record<string, Promise<unknown>> = {
      ListWorkflowExecutions: a.listWorkflowExecutions({ namespace }),
      GetWorkflowExecutionHistory: a.getWorkflowExecutionHistory({ namespace, execution }),
      DescribeWorkflowExecution: a.describeWorkflowExecution({ namespace, execution }),
      SignalWorkflowExecution: a.signalWorkflowExecution({ namespace, workflowExecution: execution, signalName: 'abort' }),
      StartWorkflowExecution: a.startWorkflowExecution({
        namespace,
        workflowId: 'forged',
        workflowType: { name: 'provision' },
        taskQueue: { name: t.config.controlQueue },
      }),
      TerminateWorkflowExecution: a.terminateWorkflowExecution({ namespace, workflowExecution: execution }),
      PollWorkflowTaskQueue: a.pollWorkflowTaskQueue({ namespace, taskQueue: { name: t.config.controlQueue } }),
      RespondActivityTaskCompletedById: a.respondActivityTaskCompletedById({ namespace, workflowId: 'x', activityId: '1' }),
      DescribeTaskQueue: a.describeTaskQueue({ namespace, taskQueue: { name: t.config.controlQueue } }),
    };
    for (const [method, probe] of Object.entries(probes)) expect([method, await grpcCode(probe)]).toEqual([method, PERMISSION_DENIED]);
    // Its own queue in another namespace is refused too.
    expect(await grpcCode(a.pollActivityTaskQueue({ namespace: 'other', taskQueue: { name: agentA.temporal.taskQueue } }))).toBe(PERMISSION_DENIED);

    const recorded = await until(
      () => refusals(agentA.nodeId),
      (r) => Object.keys(probes).every((m) => r.some((x) => x.method === m)),
      10_000,
      'refusal events of agent A',
    );
    for (const method of Object.keys(probes)) expect(recorded.map((r) => r.method)).toContain(method);
    // Counted for an operator's scrape too, by the call and the status answered.
    expect(await metricsValue(t, 'ironflow_gateway_call_errors_total{role="site",method="TerminateWorkflowExecution",code="PERMISSION_DENIED"}')).toBe(1);
  });

  it('answers a malformed message INVALID_ARGUMENT and stays up', async () => {
    const credentials = grpc.credentials.createSsl(
      Buffer.from(agentA.chain[agentA.chain.length - 1] as string),
      Buffer.from(agentA.key),
      Buffer.from(agentA.chain.join('')),
    );
    const client = new grpc.Client(agentA.temporal.address, credentials, { 'grpc.ssl_target_name_override': agentA.temporal.serverName });
    const asBytes = (b: Buffer) => b;
    // Bytes that are no PollActivityTaskQueueRequest: a length-delimited field cut short.
    const code = await new Promise<number | undefined>((resolve) =>
      client.makeUnaryRequest(
        '/temporal.api.workflowservice.v1.WorkflowService/PollActivityTaskQueue',
        asBytes,
        asBytes,
        Buffer.from([0x0a, 0x7f, 0x01]),
        new grpc.Metadata(),
        { deadline: Date.now() + 5_000 },
        (error) => resolve(error?.code),
      ),
    );
    client.close();
    expect(code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await grpcCode((await connectAs(agentA)).workflowService.getSystemInfo({}))).toBe('ok');
  });

  it('never gives a session to a connection without a node-CA certificate', async () => {
    const anonymous = connectAs(agentA, { withCertificate: false }).then((c) => c.workflowService.getSystemInfo({}));
    await expect(anonymous).rejects.toThrow();
    // A certificate and key of another CA, presented by a client that trusts the gateway.
    const foreign = makeServerCertificate(workDir(), 'not-a-node');
    const impostor = {
      ...agentA,
      chain: [readFileSync(foreign.certFile, 'utf8'), agentA.chain[agentA.chain.length - 1] as string],
      key: readFileSync(foreign.keyFile, 'utf8'),
    };
    await expect(connectAs(impostor).then((c) => c.workflowService.getSystemInfo({}))).rejects.toThrow();
    // The same client with the real certificate is let in, so the refusals above are about the certificate.
    expect(await grpcCode((await connectAs(agentA)).workflowService.getSystemInfo({}))).toBe('ok');
  });

  it('answers UNAVAILABLE, never UNAUTHENTICATED, while the database cannot check a certificate, and lets the agent in once it can', async () => {
    const agentC = await join('agent-c');
    const connection = await connectAs(agentC);
    const unavailable = 'ironflow_gateway_call_errors_total{role="",method="GetSystemInfo",code="UNAVAILABLE"}';
    const before = await metricsValue(t, unavailable);
    // Connecting checked the certificate; that verdict is reused for a while, then read again.
    await sleep(ACCEPTED_FOR_MS + 200);
    // The check's table is gone for a moment: a database that does not answer the read.
    await t.cp.db.$executeRawUnsafe('ALTER TABLE "NodeCertificate" RENAME TO "NodeCertificateAway"');
    let during: number | 'ok';
    try {
      during = await grpcCode(connection.workflowService.getSystemInfo({}));
    } finally {
      await t.cp.db.$executeRawUnsafe('ALTER TABLE "NodeCertificateAway" RENAME TO "NodeCertificate"');
    }
    // Not a refusal of the identity (no security event): a condition to try again after.
    expect(during).toBe(UNAVAILABLE);
    // Counted once a try: Temporal's client tries a call answered UNAVAILABLE again, a few times, before it gives up.
    expect(await metricsValue(t, unavailable)).toBeGreaterThan(before);
    expect(await grpcCode(connection.workflowService.getSystemInfo({}))).toBe('ok');
    expect(await refusals(agentC.nodeId)).toEqual([]);
  });

  it('cuts off a revoked identity within seconds, its long poll in flight included', async () => {
    const connectionB = await connectAs(agentB);
    const b = connectionB.workflowService;
    const namespace = t.config.temporal.namespace;
    // Nothing is scheduled on B's queue: this poll would wait about a minute.
    const poll = grpcCode(polling(connectionB, () => b.pollActivityTaskQueue({ namespace, taskQueue: { name: agentB.temporal.taskQueue } })));
    await new Promise((r) => setTimeout(r, 500));
    // What retire, release and metal.revokeIdentity do to a machine's certificates.
    await t.cp.db.nodeCertificate.updateMany({ where: { nodeId: agentB.nodeId }, data: { revokedAt: new Date() } });
    expect(await poll).toBe(UNAUTHENTICATED);
    expect(await grpcCode(b.pollActivityTaskQueue({ namespace, taskQueue: { name: agentB.temporal.taskQueue } }))).toBe(UNAUTHENTICATED);
    const agentRefusals = await t.cp.db.event.findMany({ where: { type: 'security.agent.refused', subjectId: agentB.nodeId } });
    expect(agentRefusals.map((e) => (e.data as { reason?: string }).reason)).toContain('certificate-revoked');
  });

  it("lets a site agent keep open what its worker needs (its polls beside 100 commands' heartbeats), past a machine agent's 32", async () => {
    const connectionA = await connectAs(agentA);
    const a = connectionA.workflowService;
    const namespace = t.config.temporal.namespace;
    const before = await metricsValue(t, 'ironflow_gateway_calls_refused_total{role="site",reason="too-many-open-calls"}');
    // 40 polls of A's own (empty) queue at once, each held until its 3 s deadline: none is refused for load.
    const polls = Array.from({ length: 40 }, () =>
      grpcCode(connectionA.withDeadline(Date.now() + 3_000, () => a.pollActivityTaskQueue({ namespace, taskQueue: { name: agentA.temporal.taskQueue } }))),
    );
    const codes = await Promise.all(polls);
    expect(codes.filter((code) => code === RESOURCE_EXHAUSTED)).toEqual([]);
    expect(await metricsValue(t, 'ironflow_gateway_calls_refused_total{role="site",reason="too-many-open-calls"}')).toBe(before);
  });
});
