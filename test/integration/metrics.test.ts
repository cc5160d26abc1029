// GET /metrics: the control plane's Prometheus metrics and the Temporal SDK's worker metrics
// in one scrape, after real requests, a real workflow and a provision run whose end the
// lifecycle applies; root operators only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProvisionResult } from '../../core/plan';
import type { SystemCheckView } from '../../core/schemas/system';
import { newId } from '../../services/ids';
import { applyStateOutcome } from '../../services/metal/lifecycle-moves';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { freePort } from '../helpers/ports';
import { createNode } from '../helpers/provision';

let t: TestControlPlane;
beforeAll(async () => {
  t = await startTestControlPlane({ config: await testConfig({ IRONFLOW_METRICS_SDK_ADDRESS: `127.0.0.1:${await freePort()}` }) });
});
afterAll(async () => t?.close());

const scrape = async () => {
  const answer = await t.root.request<string>('GET', '/metrics');
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return answer.body;
};
/** The value of one series, or undefined when it is absent. */
const valueOf = (text: string, series: RegExp): number | undefined => {
  const line = text.split('\n').find((l) => series.test(l));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('GET /metrics', () => {
  it('counts API requests by route pattern and status, and a workflow the worker ran, by its type', async () => {
    const check = await t.root.call<SystemCheckView>('POST', '/v1/system/checks', { tenantId: 'root' });
    await t.cp.temporal.workflow.getHandle(check.workflowId).result();
    for (let i = 0; i < 3; i++) await t.root.call('GET', `/v1/system/checks/${check.id}?tenantId=root`);
    await t.root.request('GET', '/v1/sites/site_00000000000000000000000000?tenantId=root');

    const text = await scrape();
    // The pattern, not the URL: one series for every check id.
    expect(valueOf(text, /^ironflow_api_request_duration_seconds_count\{method="GET",route="\/v1\/system\/checks\/:checkId",status="200"\}/)).toBe(3);
    expect(valueOf(text, /^ironflow_api_request_duration_seconds_count\{method="GET",route="\/v1\/sites\/:siteId",status="404"\}/)).toBe(1);
    expect(text).not.toContain(check.id);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    // The SDK's own, from its exporter: the workflow by type, task slots.
    expect(valueOf(text, /^temporal_workflow_completed_total\{.*workflow_type="systemCheck"/)).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^temporal_worker_task_slots_available\{/m);
  });

  it('times provision runs by state and outcome, control steps by activity and outcome, and counts the state ends the lifecycle applied', async () => {
    const nodeId = newId('node');
    await createNode(t.cp.db, { nodeId, siteId: 'site_metrics' });
    const runs = async (id: string, steps: unknown[]) => {
      await t.root.call('POST', '/v1/profiles', { tenantId: 'root', document: { id, version: 1, target: 'metal', steps } });
      const { workflowId } = await t.root.call<{ workflowId: string }>('POST', `/v1/profiles/${id}/runs`, {
        tenantId: 'root',
        nodeId,
        provisionState: 'inspecting',
      });
      return workflowId;
    };
    const workflowId = await runs('metrics-steps', [
      { use: 'event.append', with: { message: 'one' } },
      { use: 'event.append', with: { message: 'two' } },
    ]);
    const result = (await t.cp.temporal.workflow.getHandle(workflowId).result()) as ProvisionResult;
    // The lifecycle applies the run's end to the node it expects it for; a stale one changes (and counts) nothing.
    await t.cp.db.node.update({ where: { id: nodeId }, data: { workflowId } });
    expect(await applyStateOutcome(t.cp.db, { nodeId, workflowId: 'node:stale', outcome: 'failed' })).toEqual({ applied: false, state: 'inspecting' });
    expect(await applyStateOutcome(t.cp.db, { nodeId, workflowId, outcome: 'succeeded', outputs: result.outputs ?? {} })).toEqual({
      applied: true,
      state: 'commissioning',
    });

    const text = await scrape();
    expect(valueOf(text, /^ironflow_workflow_duration_seconds_count\{workflow="provision",state="inspecting",outcome="completed"\}/)).toBe(1);
    expect(valueOf(text, /^ironflow_workflow_duration_seconds_count\{workflow="systemCheck",state="",outcome="completed"\}/)).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, /^ironflow_control_activity_duration_seconds_count\{activity="event\.append",outcome="completed"\}/)).toBe(2);
    expect(valueOf(text, /^ironflow_state_outcomes_total\{state="inspecting",move="complete"\}/)).toBe(1);
    expect(valueOf(text, /^ironflow_state_outcomes_total\{state="inspecting",move="fail"\}/)).toBeUndefined();
    // Kinds, never ids: neither the node nor its workflow names a series.
    expect(text).not.toContain(nodeId);
  });

  it('counts agent sessions by role, site and whether they are connected', async () => {
    const now = new Date();
    const stale = new Date(Date.now() - 3_600_000);
    await t.cp.db.agentSession.createMany({
      data: [
        { nodeId: newId('node'), siteId: 'site_metrics_a', role: 'site', lastSeenAt: now, taskQueue: 'site.a.1' },
        { nodeId: newId('node'), siteId: 'site_metrics_a', role: 'site', lastSeenAt: stale, taskQueue: 'site.a.2' },
        { nodeId: newId('node'), siteId: 'site_metrics_a', role: 'ramdisk', lastSeenAt: now, taskQueue: 'ramdisk.x' },
      ],
    });
    const text = await scrape();
    expect(valueOf(text, /^ironflow_agent_sessions\{role="site",site="site_metrics_a",connected="true"\}/)).toBe(1);
    expect(valueOf(text, /^ironflow_agent_sessions\{role="site",site="site_metrics_a",connected="false"\}/)).toBe(1);
    expect(valueOf(text, /^ironflow_agent_sessions\{role="ramdisk",site="site_metrics_a",connected="true"\}/)).toBe(1);
  });

  it('answers root operators only', async () => {
    expect((await t.anonymous.request('GET', '/metrics')).status).toBe(401);
    await t.root.call('POST', '/v1/tenants', { id: 'metrics-co', name: 'Metrics Co' });
    const tenant = await t.root.call<{ credential: string }>('POST', '/v1/credentials', {
      tenantId: 'metrics-co',
      name: 'reader',
      permissions: ['compute:events:read'],
    });
    const refused = await t.root.withCredential(tenant.credential).request<{ error: { code: string } }>('GET', '/metrics');
    expect([refused.status, refused.body.error.code]).toEqual([403, 'PERMISSION_DENIED']);
  });
});
