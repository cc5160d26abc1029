// A control-plane worker in a process of its own (stack/control-plane-worker.ts, the cluster
// profile's) serves its own GET /metrics on metrics.workerAddress: the workflows and control
// activities it ran, its process, then the SDK's worker metrics it exports. The API's
// /metrics, whose process runs no worker, counts none of them and appends no SDK metrics, so
// a scrape of both counts nothing twice. An address already taken stops the worker before it
// polls, naming the setting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemCheckView } from '../../core/schemas/system';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../helpers/control-plane';
import { freePort } from '../helpers/ports';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

let t: TestControlPlane;
let worker: WorkerProcess;
let metricsUrl: string;
let metricsAddress: string;

beforeAll(async () => {
  // As in the cluster profile, the API's settings name the worker's SDK exporter: its /metrics must not append another process's.
  const sdkAddress = `127.0.0.1:${await freePort()}`;
  t = await startTestControlPlane({ worker: false, config: await testConfig({ IRONFLOW_METRICS_SDK_ADDRESS: sdkAddress }) });
  metricsAddress = `127.0.0.1:${await freePort()}`;
  metricsUrl = `http://${metricsAddress}/metrics`;
  worker = await startWorkerProcess(t.config, { IRONFLOW_METRICS_WORKER_ADDRESS: metricsAddress, IRONFLOW_METRICS_SDK_ADDRESS: sdkAddress });
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  await t?.close();
});

/** The value of the first series matching, or undefined when there is none. */
const valueOf = (text: string, series: RegExp): number | undefined => {
  const line = text.split('\n').find((l) => series.test(l));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('a control-plane worker process’s own GET /metrics', () => {
  it('counts the workflow and activity it ran, its process and the SDK’s metrics; the API’s /metrics counts neither', async () => {
    expect(worker.stdout()).toContain(`metrics on ${metricsUrl}`);
    // The suite's processes are shared between files, so the API's counts are compared before and after.
    const systemChecks = /^ironflow_workflow_duration_seconds_count\{[^}]*workflow="systemCheck"/;
    const checkPosts = /^ironflow_api_request_duration_seconds_count\{method="POST",route="\/v1\/system\/checks",status="202"\}/;
    const apiBefore = (await t.root.request<string>('GET', '/metrics')).body;
    const check = await t.root.call<SystemCheckView>('POST', '/v1/system/checks', { tenantId: 'root' });
    const ran = await t.cp.temporal.workflow.getHandle(check.workflowId).result();
    // The worker process ran it, not the API's process (which has no worker).
    expect((ran as { workerId: string }).workerId).toMatch(new RegExp(`:${worker.child.pid}$`));

    const answer = await fetch(metricsUrl);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await answer.text();
    expect(valueOf(text, /^ironflow_workflow_duration_seconds_count\{[^}]*workflow="systemCheck"[^}]*outcome="completed"/)).toBe(1);
    expect(valueOf(text, /^ironflow_control_activity_duration_seconds_count\{[^}]*activity="recordSystemCheck"[^}]*outcome="completed"/)).toBe(1);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(valueOf(text, /^temporal_workflow_completed_total\{[^}]*workflow_type="systemCheck"/)).toBe(1);

    const api = await t.root.request<string>('GET', '/metrics');
    expect(api.status).toBe(200);
    expect(valueOf(api.body, systemChecks)).toBe(valueOf(apiBefore, systemChecks));
    expect(api.body).not.toMatch(/^temporal_/m);
    // The API's own requests are still its: the check's POST, by route pattern.
    expect(valueOf(api.body, checkPosts)).toBe((valueOf(apiBefore, checkPosts) ?? 0) + 1);
  }, 60_000);

  it('answers GET /metrics only', async () => {
    expect((await fetch(metricsUrl, { method: 'POST', body: '' })).status).toBe(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/'))).status).toBe(404);
  });

  it('a second worker on an address already taken stops before it polls, naming the setting', async () => {
    await expect(startWorkerProcess(t.config, { IRONFLOW_METRICS_WORKER_ADDRESS: metricsAddress })).rejects.toThrow(
      /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\): set metrics\.workerAddress in temporal-dev\.yaml or IRONFLOW_METRICS_WORKER_ADDRESS/,
    );
  }, 60_000);
});
