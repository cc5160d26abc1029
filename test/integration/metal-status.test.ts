// GET /v1/metal/nodes/:id/status (and `ironflow metal status`) through the real API, database
// and Temporal dev server: a node whose enrolling step waits for a site agent, then runs on
// one (a first attempt fails, the retry hangs), then is aborted. The site agent's BMC side is
// emulated hardware: an activity-only worker on the agent's queue.
import { Context } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteAgentQueue } from '../../core/agent-queues';
import { newId } from '../../services/ids';
import type { MetalNodeView } from '../../core/schemas/metal';
import type { MetalStatusView } from '../../core/schemas/metal-status';
import { runCli } from '../helpers/cli';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { keepSessions, startEmulatedAgent, until, type EmulatedAgent } from '../helpers/provision';

const AGENT = 'node_status_site_agent';
let t: TestControlPlane;
let siteId: string;
let poolId: string;
let agent: EmulatedAgent | undefined;
let session: { stop(): Promise<void> } | undefined;
let inspectCalls = 0;

const status = (nodeId: string, tenantId = 'root') =>
  t.root.request<MetalStatusView & { error: { code: string } }>('GET', `/v1/metal/nodes/${nodeId}/status?tenantId=${tenantId}`);
const statusOf = async (nodeId: string) => (await status(nodeId)).body;

beforeAll(async () => {
  t = await startTestControlPlane();
  await t.root.call('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
  siteId = (await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-status', idempotencyKey: 'status-site' }))
    .id;
  poolId = (
    await t.root.call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId, class: 'metal-host', policy: { hardwareProfile: 'gpu-redfish' } })
  ).id;
});

afterAll(async () => {
  await session?.stop();
  await agent?.stop();
  await t?.close();
});

describe('metal status', () => {
  it('answers the step, its wait, attempts and last failure while the state workflow runs, and the error class after it ends', async () => {
    const enrolled = await t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId,
      bmc: { driver: 'redfish', address: 'https://10.0.9.1', username: 'admin', password: 'status-bmc-password' },
      macs: ['b8:ce:f6:00:09:01'],
    });
    const nodeId = enrolled.nodeId;
    const workflowId = `node:${nodeId}:enrolling:1`;

    // No site agent is connected: enrolling's inspect.oob waits for one.
    const waiting = await until(
      () => statusOf(nodeId),
      (s) => s.waitingFor !== null,
      20_000,
      'the wait for a site agent',
    );
    expect(waiting).toMatchObject({
      nodeId,
      siteId,
      state: 'enrolling',
      maintenance: false,
      workflow: { workflowId, runStatus: 'RUNNING', phase: 'steps', webUiPath: expect.stringContaining(`/workflows/${encodeURIComponent(workflowId)}/`) },
      step: { key: 'steps[0]', use: 'inspect.oob', attempt: 0, taskQueue: null },
      waitingFor: `a connected site agent of site ${siteId}`,
      error: null,
      failedFrom: null,
      logs: {
        machineAgent: null,
        siteAgents: [],
        bmc: { driver: 'redfish', address: 'https://10.0.9.1' },
        events: { subjectId: nodeId, command: 'ironflow events --tenant root --type node.' },
      },
    });
    expect(Date.parse(waiting.step?.startedAt ?? '')).not.toBeNaN();
    expect(JSON.stringify(waiting)).not.toContain('status-bmc-password');

    // Tenant-scoped: another tenant's view has no such node.
    const other = await status(nodeId, 'acme');
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');

    // A site agent connects: the step goes to its queue; the BMC fails the first attempt, the retry hangs.
    agent = await startEmulatedAgent(t.config, siteAgentQueue(siteId, AGENT), {
      'inspect.oob': async () => {
        inspectCalls += 1;
        if (inspectCalls === 1) throw new Error('BMC did not answer within 10 s');
        for (;;) {
          Context.current().heartbeat();
          await Context.current().sleep(200); // throws when the step is cancelled
        }
      },
    });
    session = keepSessions(t.cp.db, [{ nodeId: AGENT, siteId, role: 'site', taskQueue: siteAgentQueue(siteId, AGENT) }]);
    const running = await until(
      () => statusOf(nodeId),
      (s) => s.step?.activityAttempt === 2,
      20_000,
      'the second attempt of inspect.oob',
    );
    expect(running).toMatchObject({
      waitingFor: null,
      workflow: { workflowId, runStatus: 'RUNNING' },
      step: {
        key: 'steps[0]',
        use: 'inspect.oob',
        attempt: 1,
        activityAttempt: 2,
        taskQueue: siteAgentQueue(siteId, AGENT),
        lastFailure: 'BMC did not answer within 10 s',
      },
      logs: { siteAgents: [{ agentNodeId: AGENT, taskQueue: siteAgentQueue(siteId, AGENT), connected: true }] },
    });

    // The CLI says the same in one line per fact.
    const cli = await runCli(['metal', 'status', nodeId], { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/step\s+steps\[0\] inspect\.oob/);
    expect(cli.stdout).toMatch(/attempt\s+1 \(activity attempt 2\)/);
    expect(cli.stdout).toContain(`${workflowId} RUNNING (steps)`);
    expect(cli.stdout).toContain('BMC did not answer within 10 s');

    // After it ends: no workflow, the error class of the failure.
    const aborted = await t.root.request<MetalNodeView>('POST', `/v1/metal/nodes/${nodeId}/abort`, { tenantId: 'root', reason: 'status test stop' });
    expect(aborted.status).toBe(200);
    const ended = await until(
      () => statusOf(nodeId),
      (s) => s.workflow === null,
      20_000,
      'the workflow to end',
    );
    expect(ended).toMatchObject({
      state: 'failed',
      failedFrom: 'enrolling',
      maintenance: true,
      maintenanceReason: 'enrolling aborted: status test stop',
      step: null,
      waitingFor: null,
      error: { code: 'ABORTED', message: 'status test stop' },
    });
    // The aborted run itself ends after its cleanup (the node left it at once).
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('FAILED');
  });

  it('an unknown node is NOT_FOUND', async () => {
    const res = await status(newId('node'));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  // Last: it stops this file's control-plane worker.
  it('with no worker to answer the status query, still answers what the node row and Temporal know', async () => {
    // A site of its own, with no site agent: the step waits.
    const quietSite = (
      await t.root.call<{ id: string }>('POST', '/v1/sites', {
        tenantId: 'root',
        kind: 'shared',
        region: 'lab-status-quiet',
        idempotencyKey: 'status-quiet-site',
      })
    ).id;
    const quietPool = (
      await t.root.call<{ id: string }>('POST', '/v1/pools', {
        tenantId: 'root',
        siteId: quietSite,
        class: 'metal-host',
        policy: { hardwareProfile: 'gpu-redfish' },
      })
    ).id;
    const enrolled = await t.root.call<MetalNodeView>('POST', '/v1/metal/nodes', {
      tenantId: 'root',
      poolId: quietPool,
      bmc: { driver: 'ipmi', address: '10.0.9.2', username: 'admin', password: 'status-bmc-password' },
      macs: ['b8:ce:f6:00:09:02'],
    });
    await until(
      () => statusOf(enrolled.nodeId),
      (s) => s.waitingFor !== null,
      20_000,
      'the wait for a site agent',
    );
    await t.cp.worker?.shutdown();
    const answer = await statusOf(enrolled.nodeId);
    expect(answer).toMatchObject({
      state: 'enrolling',
      workflow: { workflowId: `node:${enrolled.nodeId}:enrolling:1`, runStatus: 'RUNNING', phase: null },
      step: null,
      waitingFor: null,
      error: null,
    });
  });
});
