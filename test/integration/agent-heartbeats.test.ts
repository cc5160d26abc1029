// When an agent's step beats reach Temporal: its real worker (agent/common/restricted-worker.ts),
// through the agent gateway, to a real Temporal server, which records each beat it receives.
// The beats must land every half heartbeat timeout, as the step makes them, not on the SDK's
// default throttle of 0.8 × the timeout: that left a beat 0.2 × the timeout to arrive, and on a
// loaded control plane ramdisk steps missed it. Progress rides on the beats, and the gateway
// counts each call it forwards (ironflow_gateway_calls_total).
import { tsToMs } from '@temporalio/common/lib/time';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heartbeating, reportProgress } from '../../agent/common/heartbeating';
import { STEP_STARTED } from '../../core/step-started';
import type { RestrictedWorker } from '../../agent/common/restricted-worker';
import { lastHeartbeat } from '../../services/temporal/readers';
import type { AgentCommandInput } from '../../workflows/agent-command';
import type { TestControlPlane } from '../helpers/control-plane';
import { startJoinedWorkerOnNewSite } from '../helpers/joined-worker';
import { metricsValue } from '../helpers/metrics';

const HEARTBEAT_TIMEOUT_MS = 4_000;
const STEP_MS = 9_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestControlPlane;
let worker: RestrictedWorker | undefined;
let taskQueue: string;
let siteId: string;

beforeAll(async () => {
  // A wipe-like step: it reports progress once, early, and runs for a while.
  const wipe = heartbeating(async () => {
    await sleep(500);
    reportProgress({ disk: 'vda', percent: 10 });
    await sleep(STEP_MS - 500);
    return { wiped: true };
  });
  // A kexec-like step: one attempt, shorter than half its heartbeat timeout.
  const kexec = heartbeating(async () => {
    await sleep(1_500);
    return { kexec: true };
  });
  ({ t, siteId, worker, taskQueue } = await startJoinedWorkerOnNewSite('lab-beats', {
    name: 'ramdisk-beats',
    mode: 'ramdisk',
    activities: { 'disk.wipe': wipe, 'boot.kexec': kexec },
  }));
});

afterAll(async () => {
  await worker?.stop();
  await t?.close();
});

describe("an agent's running step", () => {
  it('has its beats recorded by Temporal every half heartbeat timeout, each with its latest progress', async () => {
    const workflowId = `test:beats:${Date.now()}`;
    const command: AgentCommandInput = {
      taskQueue,
      activity: 'disk.wipe',
      input: {
        workflowId,
        stepKey: 'wipe',
        use: 'disk.wipe',
        with: {},
        target: { tenantId: 'root', nodeId: 'node-beats', siteId, provisionState: 'cleaning', labels: {} },
      },
      timeoutMs: 60_000,
      heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
      // With retries: a step of one attempt also beats as it starts (below).
      maximumAttempts: 2,
    };
    // The identity's certificate is the site's (a site token), so the gateway counts its calls as a site's.
    const forwarded = (method: string) => metricsValue(t, `ironflow_gateway_calls_total{role="site",method="${method}"}`);
    const [beatsBefore, completionsBefore] = [await forwarded('RecordActivityTaskHeartbeat'), await forwarded('RespondActivityTaskCompleted')];
    const handle = await t.cp.temporal.workflow.start('agentCommand', { taskQueue: t.config.controlQueue, workflowId, args: [command] });

    // Temporal's record of the step's last beat, read every 100 ms while it runs.
    const recorded = new Set<number>();
    const progress: unknown[] = [];
    for (;;) {
      const description = await handle.describe();
      if (description.status.name !== 'RUNNING') break;
      const pending = description.raw.pendingActivities?.[0];
      const at = pending?.lastHeartbeatTime ? tsToMs(pending.lastHeartbeatTime) : undefined;
      if (pending && at !== undefined && !recorded.has(at)) {
        recorded.add(at);
        progress.push(await lastHeartbeat(t.cp.temporal, pending));
      }
      await sleep(100);
    }
    expect(await handle.result()).toEqual({ wiped: true });

    // Beats at 2, 4, 6 and 8 s; on the SDK's default throttle they were 3.2 s apart.
    const beats = [...recorded].sort((a, b) => a - b);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    const gaps = beats.slice(1).map((at, i) => at - (beats[i] as number));
    expect(Math.max(...gaps)).toBeLessThan(0.7 * HEARTBEAT_TIMEOUT_MS);
    for (const details of progress) expect(details).toEqual({ disk: 'vda', percent: 10 });
    // Every beat the server recorded went through the gateway, and no other (the last may land as the step ends, unread).
    expect((await forwarded('RecordActivityTaskHeartbeat')) - beatsBefore).toBeGreaterThanOrEqual(beats.length);
    expect((await forwarded('RecordActivityTaskHeartbeat')) - beatsBefore).toBeLessThanOrEqual(beats.length + 1);
    expect((await forwarded('RespondActivityTaskCompleted')) - completionsBefore).toBe(1);
  }, 60_000);

  it('of one attempt beats once as it starts, saying so, though it ends before half its heartbeat timeout', async () => {
    const workflowId = `test:beats-once:${Date.now()}`;
    const command: AgentCommandInput = {
      taskQueue,
      activity: 'boot.kexec',
      input: {
        workflowId,
        stepKey: 'kexec',
        use: 'boot.kexec',
        with: {},
        target: { tenantId: 'root', nodeId: 'node-beats', siteId, provisionState: 'deploying', labels: {} },
      },
      timeoutMs: 60_000,
      heartbeatTimeoutMs: 10_000,
      maximumAttempts: 1,
    };
    const beatsBefore = await metricsValue(t, `ironflow_gateway_calls_total{role="site",method="RecordActivityTaskHeartbeat"}`);
    const handle = await t.cp.temporal.workflow.start('agentCommand', { taskQueue: t.config.controlQueue, workflowId, args: [command] });
    // The retry policy reached the agent through the gateway: the beat at the start, recorded with what it says.
    let started: unknown = null;
    while (started === null) {
      const pending = (await handle.describe()).raw.pendingActivities?.[0];
      if (pending?.lastHeartbeatTime) started = await lastHeartbeat(t.cp.temporal, pending);
      else await sleep(50);
    }
    expect(started).toEqual(STEP_STARTED);
    expect(await handle.result()).toEqual({ kexec: true });
    expect((await metricsValue(t, `ironflow_gateway_calls_total{role="site",method="RecordActivityTaskHeartbeat"}`)) - beatsBefore).toBe(1);
  }, 60_000);
});
