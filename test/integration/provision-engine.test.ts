// The provision engine against the real Temporal dev server: profiles stored through the
// API run as `provision` workflows on the control-plane worker; the machine side (site
// agent, ramdisk) is emulated by activity-only workers on the agents' queues.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeAgentQueue, ramdiskQueue, siteAgentQueue } from '../../core/agent-queues';
import { recordHeartbeat } from '../../services/agent-sessions/record-heartbeat';
import { newId } from '../../services/ids';
import type { ProvisionStatus, StepInput } from '../../core/plan';
import { toolPath } from '../../stack/tools';
import { encodeToPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { STEP_STARTED } from '../../core/step-started';
import { STEP_OUTCOME_ACTIVITY } from '../../core/step-outcome';
import { withStepOutcomes } from '../../agent/common/step-outcomes';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import {
  createNode,
  emulatedRamdiskQueue,
  keepSessions,
  Ledger,
  startEmulatedAgent,
  startEmulatedRamdisk,
  until,
  type EmulatedAgent,
  type MachineActivity,
} from '../helpers/provision';

const run = promisify(execFile);
let t: TestControlPlane;
let ledger: Ledger;
const agents: EmulatedAgent[] = [];
const sessions: Array<{ stop(): Promise<void> }> = [];
/** Per `<nodeId>/<stepKey>`: what the emulated machine does on that step. */
const behaviour = new Map<string, (input: StepInput, attempt: number) => Promise<unknown>>();

function machineStep(use: string): MachineActivity {
  return async (input) => {
    const { attempt, taskQueue } = Context.current().info;
    const step = `${input.target.nodeId}/${input.stepKey}`;
    ledger.append({ step, use, event: 'start', attempt, queue: taskQueue, data: input.confirmedMac ?? null });
    try {
      const result = await (behaviour.get(step)?.(input, attempt) ?? Promise.resolve({ ok: true }));
      ledger.append({ step, use, event: 'done', attempt, queue: taskQueue });
      return result;
    } catch (err) {
      ledger.append({ step, use, event: Context.current().cancellationSignal.aborted ? 'cancelled' : 'fail', attempt, queue: taskQueue });
      throw err;
    }
  };
}
const machine = Object.fromEntries(
  ['boot.prepareRamdisk', 'boot.cleanUp', 'management.setBootDevice', 'power.setPower', 'inventory.refresh', 'disk.wipe', 'boot.kexec'].map((u) => [
    u,
    machineStep(u),
  ]),
);

const SITE = 'site_engine';
const AGENT_A = 'node_agent_a';
const AGENT_B = 'node_agent_b';

async function newMachine(): Promise<string> {
  const nodeId = newId('node');
  await createNode(t.cp.db, { nodeId, siteId: SITE });
  agents.push(await startEmulatedRamdisk(t.config, t.cp.db, { nodeId, siteId: SITE }, machine));
  return nodeId;
}

async function storeAndRun(document: Record<string, unknown>, nodeId: string, labels: Record<string, string> = {}): Promise<string> {
  await t.root.call('POST', '/v1/profiles', { tenantId: 'root', document });
  const started = await t.root.call<{ workflowId: string }>('POST', `/v1/profiles/${document.id as string}/runs`, {
    tenantId: 'root',
    nodeId,
    provisionState: 'inspecting',
    labels,
  });
  return started.workflowId;
}

const status = (workflowId: string) => t.cp.temporal.workflow.getHandle(workflowId).query<ProvisionStatus>('status');

/** Runs a wait for the machine's ramdisk to join, then one kexec on it, and tells the run its ramdisk's queue is `queue`; answers the run's id. */
async function runKexecOn(nodeId: string, queue: string, profile: { id: string; version: number; kexecTimeout: string }): Promise<string> {
  const workflowId = await storeAndRun(
    {
      id: profile.id,
      version: profile.version,
      target: 'metal',
      steps: [
        { use: 'wait.agentJoined', with: { role: 'ramdisk' }, timeout: '30s' },
        // One attempt (retry class once); its heartbeat timeout is the kind's 30 s, or the step's timeout when shorter.
        { use: 'boot.kexec', on: 'ramdisk', timeout: profile.kexecTimeout },
      ],
    },
    nodeId,
  );
  await until(
    () => status(workflowId),
    (st) => st.waitingFor?.startsWith('agentJoined') === true,
    10_000,
    'the join wait',
  );
  await t.cp.temporal.workflow.getHandle(workflowId).signal('agentJoined', { role: 'ramdisk', agentNodeId: nodeId, taskQueue: queue });
  return workflowId;
}

/** Starts a run of one kexec (4 s) on the ramdisk queue `queue`, and takes its first task as a poll that then never answers would. */
async function firstTaskLost(nodeId: string, queue: string, version: number) {
  await createNode(t.cp.db, { nodeId, siteId: SITE });
  const lostPoll = t.cp.temporal.connection.withDeadline(Date.now() + 60_000, () =>
    t.cp.temporal.workflowService.pollActivityTaskQueue({
      namespace: t.config.temporal.namespace,
      taskQueue: { name: queue },
      identity: 'a poll whose answer never arrived',
    }),
  );
  const workflowId = await runKexecOn(nodeId, queue, { id: 'engine-lost-task', version, kexecTimeout: '4s' });
  const task = await lostPoll;
  expect(task.activityType?.name).toBe('boot.kexec');
  return { workflowId, task, queue };
}

/** Records the beat an agent sends as a one-attempt step starts, for the task `taskToken`. */
async function beatStarted(taskToken: Uint8Array | null | undefined): Promise<void> {
  const details = await encodeToPayloads(t.cp.temporal.options.loadedDataConverter, STEP_STARTED);
  await t.cp.temporal.workflowService.recordActivityTaskHeartbeat({ namespace: t.config.temporal.namespace, taskToken, details: { payloads: details } });
}

/** The message a failed run ended with. */
async function failureOf(workflowId: string): Promise<string> {
  const error = await t.cp.temporal.workflow
    .getHandle(workflowId)
    .result()
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  return String((error as WorkflowFailedError | undefined)?.cause?.message);
}

/** How many times a run scheduled the activity `name`. */
async function scheduledIn(workflowId: string, name: string): Promise<number | undefined> {
  const history = await t.cp.temporal.workflow.getHandle(workflowId).fetchHistory();
  return history.events?.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name).length;
}

beforeAll(async () => {
  t = await startTestControlPlane();
  ledger = new Ledger(path.join(t.config.dataDir, 'ledger.jsonl'));
  // Two site agents; A holds the boot lease, so site steps go to A.
  agents.push(await startEmulatedAgent(t.config, siteAgentQueue(SITE, AGENT_A), machine));
  agents.push(await startEmulatedAgent(t.config, siteAgentQueue(SITE, AGENT_B), machine));
  sessions.push(
    keepSessions(t.cp.db, [
      { nodeId: AGENT_A, siteId: SITE, role: 'site', taskQueue: siteAgentQueue(SITE, AGENT_A) },
      { nodeId: AGENT_B, siteId: SITE, role: 'site', taskQueue: siteAgentQueue(SITE, AGENT_B) },
    ]),
  );
  await t.cp.db.bootLease.create({ data: { siteId: SITE, holderNodeId: AGENT_A, epoch: 1, expiresAt: new Date(Date.now() + 3_600_000) } });
});

afterAll(async () => {
  for (const s of sessions) await s.stop();
  await Promise.all(agents.map((a) => a.stop()));
  await t?.close();
});

describe('provision workflows', () => {
  it('runs steps on the control, site and ramdisk queues to completion, with ids, search attributes and memo', async () => {
    const nodeId = await newMachine();
    const workflowId = await storeAndRun(
      {
        id: 'engine-basic',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'event.append', with: { message: 'starting' } },
          { use: 'management.setBootDevice', on: 'site', with: { device: 'pxe' }, timeout: '5s' },
          { use: 'inventory.refresh', on: 'ramdisk', timeout: '5s' },
          { use: 'disk.wipe', on: 'ramdisk', timeout: '5s', when: 'nvme' },
          { use: 'disk.wipe', on: 'ramdisk', timeout: '5s', when: '!nvme' },
        ],
        acceptance: [{ use: 'event.append', with: { message: 'accepted' } }],
        cleanup: [{ use: 'boot.cleanUp', on: 'site', timeout: '5s' }],
      },
      nodeId,
      { nvme: 'true' },
    );
    expect(workflowId).toBe(`node:${nodeId}:inspecting:1`);
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    const result = await handle.result();
    expect(result.history.map((h: { key: string; outcome: string }) => `${h.key}:${h.outcome}`)).toEqual([
      'steps[0]:succeeded',
      'steps[1]:succeeded',
      'steps[2]:succeeded',
      'steps[3]:succeeded',
      'steps[4]:skipped',
      'acceptance[0]:succeeded',
      'cleanup[0]:succeeded',
    ]);
    // The machine saw its steps, each on the queue its `on` names; the lease holder got the site steps.
    const seen = ledger.entries().filter((e) => e.step.startsWith(nodeId) && e.event === 'done');
    expect(seen.map((e) => `${e.use}@${e.queue}`)).toEqual([
      `management.setBootDevice@${siteAgentQueue(SITE, AGENT_A)}`,
      `inventory.refresh@${emulatedRamdiskQueue(nodeId)}`,
      `disk.wipe@${emulatedRamdiskQueue(nodeId)}`,
      `boot.cleanUp@${siteAgentQueue(SITE, AGENT_A)}`,
    ]);
    // Control steps wrote their events; the history's input is the plan.
    const events = await t.cp.db.event.findMany({ where: { type: 'workflow.step.note', subjectId: nodeId } });
    expect(events.map((e) => (e.data as { message: string }).message)).toEqual(['starting', 'accepted']);
    const description = await handle.describe();
    expect(description.searchAttributes).toMatchObject({
      NodeId: [nodeId],
      SiteId: [SITE],
      TenantId: ['root'],
      ProvisionState: ['inspecting'],
      ProfileRef: ['engine-basic@1'],
    });
    expect(description.memo).toMatchObject({ profile: 'engine-basic@1' });
    const listed = [];
    for await (const w of t.cp.temporal.workflow.list({ query: `NodeId = "${nodeId}"` })) listed.push(w.workflowId);
    expect(listed).toEqual([workflowId]);
    // The version is locked now: its document cannot change.
    const locked = await t.root.request<{ error: { code: string } }>('PATCH', '/v1/profiles/engine-basic', {
      tenantId: 'root',
      document: { id: 'engine-basic', version: 1, target: 'metal', steps: [{ use: 'event.append', with: { message: 'x' } }] },
    });
    expect(locked.body.error.code).toBe('INVALID_STATE');
    // The status endpoint reports the finished run.
    const view = await t.root.call<{ runStatus: string; status: ProvisionStatus }>('GET', `/v1/workflows/${encodeURIComponent(workflowId)}?tenantId=root`);
    expect(view.runStatus).toBe('COMPLETED');
    expect(view.status.phase).toBe('succeeded');
  });

  it('retries with the profile policy; an exhausted step runs its fallback, onFailure continue goes on, a failing step fails the run after cleanup', async () => {
    const nodeId = await newMachine();
    const flaky = (failures: number) => async (_: StepInput, attempt: number) => {
      if (attempt <= failures) throw ApplicationFailure.create({ type: 'DRIVER_ERROR', message: `BMC busy (attempt ${attempt})` });
      return { ok: true };
    };
    behaviour.set(`${nodeId}/steps[0]`, flaky(2)); // succeeds on the 3rd attempt: retries 2 is enough
    behaviour.set(`${nodeId}/steps[1]`, flaky(99)); // never: retries 1 → 2 attempts, then fallback
    behaviour.set(`${nodeId}/steps[2]`, flaky(99)); // never: onFailure continue
    behaviour.set(`${nodeId}/steps[3]`, flaky(99)); // never: fails the run
    const workflowId = await storeAndRun(
      {
        id: 'engine-retries',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'power.setPower', on: 'site', with: { action: 'on' }, timeout: '5s', retries: { max: 2, initialInterval: '1s', backoffCoefficient: 1 } },
          {
            use: 'power.setPower',
            on: 'site',
            with: { action: 'cycle' },
            timeout: '5s',
            retries: { max: 1, initialInterval: '1s' },
            fallback: { use: 'power.setPower', on: 'site', with: { action: 'reset' }, timeout: '5s' },
          },
          { use: 'inventory.refresh', on: 'ramdisk', timeout: '5s', retries: 0, onFailure: 'continue' },
          { use: 'disk.wipe', on: 'ramdisk', timeout: '5s', retries: 0 },
          { use: 'boot.kexec', on: 'ramdisk', timeout: '5s' },
        ],
        cleanup: [{ use: 'boot.cleanUp', on: 'site', timeout: '5s' }],
      },
      nodeId,
    );
    const error = await t.cp.temporal.workflow
      .getHandle(workflowId)
      .result()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(String((error as WorkflowFailedError).cause?.message)).toContain('BMC busy');
    const attempts = (key: string) => ledger.entries().filter((e) => e.step === `${nodeId}/${key}` && e.event === 'start').length;
    expect(attempts('steps[0]')).toBe(3);
    expect(attempts('steps[1]')).toBe(2);
    expect(attempts('steps[1].fallback')).toBe(1);
    expect(ledger.count(`${nodeId}/steps[1].fallback`, 'done')).toBe(1);
    expect(attempts('steps[2]')).toBe(1);
    expect(attempts('steps[3]')).toBe(1);
    expect(attempts('steps[4]')).toBe(0); // nothing after the failed step
    expect(ledger.count(`${nodeId}/cleanup[0]`, 'done')).toBe(1);
    const final = await status(workflowId);
    expect(final.phase).toBe('failed');
    expect(final.history.map((h) => `${h.key}:${h.outcome}`)).toEqual([
      'steps[0]:succeeded',
      'steps[1]:failed',
      'steps[1].fallback:fallback',
      'steps[2]:continued',
      'steps[3]:failed',
      'cleanup[0]:succeeded',
    ]);
  });

  it('numbers runs of one node and state from the database: concurrent starts get distinct ids, and a taken id is skipped', async () => {
    const nodeId = await newMachine();
    await t.root.call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: { id: 'engine-numbering', version: 1, target: 'metal', steps: [{ use: 'event.append', with: { message: 'numbered' } }] },
    });
    const start = () =>
      t.root
        .call<{ workflowId: string }>('POST', '/v1/profiles/engine-numbering/runs', { tenantId: 'root', nodeId, provisionState: 'inspecting' })
        .then((r) => r.workflowId);
    const first = await Promise.all([start(), start(), start()]);
    expect([...first].sort()).toEqual([1, 2, 3].map((n) => `node:${nodeId}:inspecting:${n}`));
    await Promise.all(first.map((id) => t.cp.temporal.workflow.getHandle(id).result()));
    // A counter that knows none of them (a database older than it): Temporal refuses ids 1–3, ended or not, and the start goes on to 4.
    await t.cp.db.profileRunSeq.delete({ where: { nodeId_provisionState: { nodeId, provisionState: 'inspecting' } } });
    expect(await start()).toBe(`node:${nodeId}:inspecting:4`);
  });

  it('cancellation mid-step runs the cleanup and nothing after the cancelled step', async () => {
    const nodeId = await newMachine();
    behaviour.set(`${nodeId}/steps[1]`, async () => {
      // A long wipe that heartbeats its progress until it is cancelled.
      const context = Context.current();
      for (let done = 0; ; done++) {
        context.heartbeat({ disksWiped: done });
        await context.sleep(200);
      }
    });
    const workflowId = await storeAndRun(
      {
        id: 'engine-cancel',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'boot.prepareRamdisk', on: 'site', timeout: '5s' },
          { use: 'disk.wipe', on: 'ramdisk', timeout: '1m' },
          { use: 'boot.kexec', on: 'ramdisk', timeout: '5s' },
        ],
        cleanup: [{ use: 'boot.cleanUp', on: 'site', timeout: '5s' }],
      },
      nodeId,
    );
    await until(
      () => ledger.count(`${nodeId}/steps[1]`, 'start'),
      (n) => n === 1,
      20_000,
      'the wipe to start',
    );
    // The status shows the running step with its heartbeat progress (through the API).
    const view = await until(
      () =>
        t.root.call<{ status: ProvisionStatus; pendingActivities: Array<{ activity: string; attempt: number; heartbeat: { disksWiped: number } | null }> }>(
          'GET',
          `/v1/workflows/${encodeURIComponent(workflowId)}?tenantId=root`,
        ),
      (v) => typeof v.pendingActivities[0]?.heartbeat?.disksWiped === 'number',
      10_000,
      'heartbeat progress',
    );
    expect(view.status.step).toMatchObject({ key: 'steps[1]', use: 'disk.wipe', queue: 'ramdisk', taskQueue: emulatedRamdiskQueue(nodeId) });
    expect(view.pendingActivities[0]).toMatchObject({ activity: 'disk.wipe', attempt: 1 });
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    await handle.cancel();
    const error = await handle.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(ledger.count(`${nodeId}/cleanup[0]`, 'done')).toBe(1);
    expect(ledger.count(`${nodeId}/steps[2]`, 'start')).toBe(0);
    await until(
      () => ledger.count(`${nodeId}/steps[1]`, 'cancelled'),
      (n) => n === 1,
      10_000,
      'the wipe to see its cancellation',
    );
    const final = await status(workflowId);
    expect(final.phase).toBe('cancelled');
    expect(final.history.map((h) => `${h.key}:${h.outcome}`)).toEqual(['steps[0]:succeeded', 'steps[1]:cancelled', 'cleanup[0]:succeeded']);
  });

  it('waits for agentJoined on await: rejoin, up to the step timeout', async () => {
    const nodeId = await newMachine();
    const workflowId = await storeAndRun(
      {
        id: 'engine-rejoin',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '30s' },
          { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '2s' },
        ],
      },
      nodeId,
    );
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    await until(
      () => status(workflowId),
      (s) => s.waitingFor?.startsWith('agentJoined') === true && s.step?.key === 'steps[0]',
      10_000,
      'the rejoin wait',
    );
    await handle.signal('agentJoined', { role: 'node' });
    const error = await handle.result().catch((e: unknown) => e);
    expect(String((error as WorkflowFailedError).cause?.message)).toContain('did not rejoin within 2000 ms');
    expect((await status(workflowId)).history.map((h) => `${h.key}:${h.outcome}`)).toEqual(['steps[0]:succeeded', 'steps[1]:failed']);
  });

  it('ramdisk steps go to the queue of the ramdisk that joined last: a powered-off one still polling its own never takes them', async () => {
    const nodeId = newId('node');
    await createNode(t.cp.db, { nodeId, siteId: SITE });
    // An earlier boot's ramdisk, powered off: its poll still open at the server. Then the machine's next ramdisk.
    const oldQueue = ramdiskQueue(nodeId, 'a'.repeat(16));
    const newQueue = ramdiskQueue(nodeId, 'b'.repeat(16));
    agents.push(await startEmulatedAgent(t.config, oldQueue, machine));
    agents.push(await startEmulatedAgent(t.config, newQueue, machine));
    let forged = () => {};
    const forgedSent = new Promise<void>((resolve) => (forged = resolve));
    behaviour.set(`${nodeId}/steps[1]`, async () => {
      await forgedSent;
      return { ok: true };
    });
    const workflowId = await storeAndRun(
      {
        id: 'engine-ramdisk-queue',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'wait.agentJoined', with: { role: 'ramdisk' }, timeout: '30s' },
          { use: 'inventory.refresh', on: 'ramdisk', timeout: '5s' },
          { use: 'disk.wipe', on: 'ramdisk', timeout: '5s' },
          { use: 'boot.kexec', on: 'ramdisk', timeout: '5s' },
        ],
      },
      nodeId,
    );
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    await until(
      () => status(workflowId),
      (s) => s.waitingFor?.startsWith('agentJoined') === true,
      10_000,
      'the join wait',
    );
    await handle.signal('agentJoined', { role: 'ramdisk', agentNodeId: nodeId, taskQueue: newQueue });
    await until(
      () => ledger.count(`${nodeId}/steps[1]`, 'start'),
      (n) => n === 1,
      10_000,
      'the inventory to start',
    );
    // A signal naming another node's ramdisk queue, or no ramdisk queue at all, is not followed.
    await handle.signal('agentJoined', { role: 'ramdisk', agentNodeId: nodeId, taskQueue: ramdiskQueue(newId('node'), 'c'.repeat(16)) });
    await handle.signal('agentJoined', { role: 'ramdisk', agentNodeId: nodeId, taskQueue: `site.${SITE}.${AGENT_A}` });
    forged();
    await handle.result();
    const ran = ledger.entries().filter((e) => e.step.startsWith(`${nodeId}/`) && e.event === 'done');
    expect(ran.map((e) => `${e.use}@${e.queue}`)).toEqual([`inventory.refresh@${newQueue}`, `disk.wipe@${newQueue}`, `boot.kexec@${newQueue}`]);
  });

  it('a one-attempt step whose task never reached its agent is sent again; one whose agent beat that it started is not', async () => {
    // Lost on its way: no beat recorded, so the kexec goes out again and the machine's ramdisk (polling by then) runs it.
    const lostId = newId('node');
    const lostQueue = ramdiskQueue(lostId, 'd'.repeat(16));
    const lost = await firstTaskLost(lostId, lostQueue, 1);
    agents.push(await startEmulatedAgent(t.config, lostQueue, machine));
    await t.cp.temporal.workflow.getHandle(lost.workflowId).result();
    const ran = ledger.entries().filter((e) => e.step === `${lostId}/steps[1]`);
    expect(ran.map((e) => `${e.event}@${e.queue}`)).toEqual([`start@${lostQueue}`, `done@${lostQueue}`]);
    expect(await scheduledIn(lost.workflowId, 'boot.kexec')).toBe(2);

    // Started, then silent (its agent died, and no agent polls its queue to be asked): it may have kexecd
    // the machine, so the step fails instead, once the question's pick-up time is out too.
    const startedId = newId('node');
    const started = await firstTaskLost(startedId, ramdiskQueue(startedId, 'e'.repeat(16)), 2);
    await beatStarted(started.task.taskToken);
    const failure = await failureOf(started.workflowId);
    expect(failure).toMatch(/^waited \d+s for boot\.kexec on /);
    expect(failure).toContain(
      `boot.kexec on ${started.queue} to answer for node ${startedId}: the step’s timeout ran out (steps[1] boot.kexec, timeout 4s per attempt)`,
    );
    expect(await scheduledIn(started.workflowId, STEP_OUTCOME_ACTIVITY)).toBe(1);
    expect(await scheduledIn(started.workflowId, 'boot.kexec')).toBe(1);
  });

  it('asks the agent of a one-attempt step that timed out after it started: the answer it kept goes on; one that knows nothing fails it; an abort still cancels it', async () => {
    // Kept: the kexec beats that it started, then works on for 8 s past its 30 s heartbeat timeout
    // with no beat (as when its beats are lost on the way), so Temporal times the attempt out and its
    // answer is never recorded; the agent, which keeps its steps' outcomes, says it still runs, then
    // answers it.
    /** A run whose kexec beats that it started and then works on for 38 s, silent, on an agent that keeps outcomes. */
    const silentKexec = async (nodeId: string, queue: string, version: number) => {
      await createNode(t.cp.db, { nodeId, siteId: SITE });
      behaviour.set(`${nodeId}/steps[1]`, async () => {
        Context.current().heartbeat(STEP_STARTED);
        await sleep(38_000);
        return { kexec: true };
      });
      agents.push(await startEmulatedAgent(t.config, queue, withStepOutcomes(machine)));
      return runKexecOn(nodeId, queue, { id: 'engine-kept-answer', version, kexecTimeout: '60s' });
    };
    /** Resolves while the run asks its agent what became of the kexec. */
    const asking = (workflowId: string, queue: string) =>
      until(
        () => status(workflowId),
        (st) => st.waitingFor?.startsWith(`${queue} to say what became of steps[1] boot.kexec`) === true,
        45_000,
        'the question to the agent',
      );
    const keptId = newId('node');
    const keptQueue = ramdiskQueue(keptId, 'a'.repeat(16));
    const keptRun = await silentKexec(keptId, keptQueue, 1);
    // And one an operator aborts while it asks: the step is cancelled, not failed as timed out.
    const abortedId = newId('node');
    const abortedQueue = ramdiskQueue(abortedId, 'c'.repeat(16));
    const abortedRun = await silentKexec(abortedId, abortedQueue, 2);

    // Meanwhile, one the agent now polling its queue knows nothing of (it was taken by a poll before
    // that agent started, as by the same agent before a restart): the step fails as its timeout says.
    const forgottenId = newId('node');
    const forgotten = await firstTaskLost(forgottenId, ramdiskQueue(forgottenId, 'b'.repeat(16)), 3);
    await beatStarted(forgotten.task.taskToken);
    agents.push(await startEmulatedAgent(t.config, forgotten.queue, withStepOutcomes(machine)));
    expect(await failureOf(forgotten.workflowId)).toContain(
      `boot.kexec on ${forgotten.queue} to answer for node ${forgottenId}: the step’s timeout ran out (steps[1] boot.kexec, timeout 4s per attempt)`,
    );
    expect(await scheduledIn(forgotten.workflowId, STEP_OUTCOME_ACTIVITY)).toBe(1);

    // While the agent says the kexec still runs, the run says what it waits for.
    await asking(keptRun, keptQueue);
    await asking(abortedRun, abortedQueue);
    await t.cp.temporal.workflow.getHandle(abortedRun).signal('abort', 'operator: wrong machine');
    expect(await failureOf(abortedRun)).toBe('aborted: operator: wrong machine');
    expect((await status(abortedRun)).history.map((h) => `${h.key} ${h.outcome}`)).toEqual(['steps[0] succeeded', 'steps[1] cancelled']);

    const result = await t.cp.temporal.workflow.getHandle(keptRun).result();
    expect(result.history.map((h: { key: string; outcome: string }) => `${h.key} ${h.outcome}`)).toEqual(['steps[0] succeeded', 'steps[1] succeeded']);
    expect(Object.values(result.outputs)).toContainEqual({ kexec: true });
    const ran = ledger.entries().filter((e) => e.step === `${keptId}/steps[1]`);
    expect(ran.map((e) => e.event)).toEqual(['start', 'done']);
    expect(await scheduledIn(keptRun, 'boot.kexec')).toBe(1);
    expect(await scheduledIn(keptRun, STEP_OUTCOME_ACTIVITY)).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('a ramdisk whose agentJoined never arrived is found by its session: the boot goes on within the recheck', async () => {
    const nodeId = newId('node');
    await createNode(t.cp.db, { nodeId, siteId: SITE });
    await t.cp.db.node.update({ where: { id: nodeId }, data: { macs: ['02:00:00:00:be:01'] } });
    const workflowId = await storeAndRun(
      {
        id: 'engine-lost-join',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'metal.ensureRamdisk', timeout: '2m' },
          { use: 'inventory.refresh', on: 'ramdisk', timeout: '10s' },
        ],
      },
      nodeId,
    );
    await until(
      () => status(workflowId),
      (st) => st.waitingFor?.startsWith(`the ramdisk of node ${nodeId} to join`) === true,
      20_000,
      'the join wait',
    );
    // The machine's ramdisk joined and opened its session; the signal that would say so was lost.
    const queue = ramdiskQueue(nodeId, 'f'.repeat(16));
    agents.push(await startEmulatedAgent(t.config, queue, machine));
    sessions.push(keepSessions(t.cp.db, [{ nodeId, siteId: SITE, role: 'ramdisk', taskQueue: queue }]));
    const waited = Date.now();
    await t.cp.temporal.workflow.getHandle(workflowId).result();
    expect(Date.now() - waited).toBeLessThan(45_000);
    const done = ledger.entries().filter((e) => e.step === `${nodeId}/steps[1]` && e.event === 'done');
    expect(done.map((e) => e.queue)).toEqual([queue]);
    expect((await status(workflowId)).history.map((h) => `${h.key}:${h.outcome}`)).toEqual(['steps[0]:succeeded', 'steps[1]:succeeded']);
  }, 90_000);

  it('an installed OS whose agentJoined never arrived is found by its new connection: the rejoin wait ends within the recheck', async () => {
    const nodeId = await newMachine();
    const workflowId = await storeAndRun(
      { id: 'engine-lost-rejoin', version: 1, target: 'metal', steps: [{ use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '2m' }] },
      nodeId,
    );
    await until(
      () => status(workflowId),
      (st) => st.waitingFor?.startsWith('agentJoined') === true,
      20_000,
      'the rejoin wait',
    );
    // The installed OS's node agent beats as the API records it (its first beat says it opened); no signal.
    const beat = () => recordHeartbeat(t.cp.db, { nodeId, siteId: SITE, role: 'node', taskQueue: nodeAgentQueue(nodeId), opened: true }, new Date());
    await beat();
    const beating = setInterval(() => void beat(), 2_000);
    try {
      const waited = Date.now();
      await t.cp.temporal.workflow.getHandle(workflowId).result();
      expect(Date.now() - waited).toBeLessThan(45_000);
    } finally {
      clearInterval(beating);
    }
    expect((await status(workflowId)).history.map((h) => `${h.key}:${h.outcome}`)).toEqual(['steps[0]:succeeded']);
  }, 90_000);

  it('a ramdisk step in a run that booted no ramdisk goes to the one the session names, and fails INVALID_STATE when none runs', async () => {
    const withRamdisk = await newMachine();
    const document = { id: 'engine-ramdisk-session', version: 1, target: 'metal', steps: [{ use: 'inventory.refresh', on: 'ramdisk', timeout: '5s' }] };
    await t.cp.temporal.workflow.getHandle(await storeAndRun(document, withRamdisk)).result();
    const done = ledger.entries().filter((e) => e.step === `${withRamdisk}/steps[0]` && e.event === 'done');
    expect(done.map((e) => e.queue)).toEqual([emulatedRamdiskQueue(withRamdisk)]);

    const without = newId('node');
    await createNode(t.cp.db, { nodeId: without, siteId: SITE });
    const error = await t.cp.temporal.workflow
      .getHandle(await storeAndRun({ ...document, version: 2 }, without))
      .result()
      .catch((e: unknown) => e);
    expect(String((error as WorkflowFailedError).cause?.message)).toContain(`no ramdisk of node ${without} is running`);
  });

  it('temporal workflow signal: confirmMac reaches the waiting step; abort cancels the step, runs cleanup and fails the run', async () => {
    const nodeId = await newMachine();
    behaviour.set(`${nodeId}/steps[1]`, async () => {
      const context = Context.current();
      for (;;) {
        context.heartbeat();
        await context.sleep(200);
      }
    });
    const workflowId = await storeAndRun(
      {
        id: 'engine-signals',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'power.setPower', on: 'site', with: { action: 'cycle' }, await: 'confirmMac', timeout: '30s' },
          { use: 'disk.wipe', on: 'ramdisk', timeout: '1m' },
          { use: 'boot.kexec', on: 'ramdisk', timeout: '5s' },
        ],
        cleanup: [{ use: 'boot.cleanUp', on: 'site', timeout: '5s' }],
      },
      nodeId,
    );
    const temporal = (...args: string[]) =>
      run(toolPath('temporal'), ['workflow', ...args, '--workflow-id', workflowId, '--address', t.config.temporal.address]);
    await until(
      () => status(workflowId),
      (s) => s.waitingFor?.startsWith('confirmMac') === true,
      10_000,
      'the confirmMac wait',
    );
    // A malformed MAC through the signal is refused and visible in the status; the Update answers the error.
    await temporal('signal', '--name', 'confirmMac', '--input', '"not-a-mac"');
    await until(
      () => status(workflowId),
      (s) => s.rejectedSignals.length === 1,
      10_000,
      'the rejected signal',
    );
    const handle = t.cp.temporal.workflow.getHandle(workflowId);
    const refused = await handle.executeUpdate('confirmMac', { args: ['zz:zz'] }).catch((e: Error) => e);
    expect(String((refused as Error).cause)).toMatch(/not a unicast MAC/);
    await temporal('signal', '--name', 'confirmMac', '--input', '"AA-BB-CC-00-11-22"');
    await until(
      () => ledger.count(`${nodeId}/steps[1]`, 'start'),
      (n) => n === 1,
      20_000,
      'the wipe to start',
    );
    const powered = ledger.entries().find((e) => e.step === `${nodeId}/steps[0]` && e.event === 'start');
    expect(powered?.data).toBe('aa:bb:cc:00:11:22');
    expect((await status(workflowId)).confirmedMac).toBe('aa:bb:cc:00:11:22');
    await temporal('signal', '--name', 'abort', '--input', '"operator: wrong machine"');
    const error = await handle.result().catch((e: unknown) => e);
    expect(String((error as WorkflowFailedError).cause?.message)).toBe('aborted: operator: wrong machine');
    expect(ledger.count(`${nodeId}/cleanup[0]`, 'done')).toBe(1);
    expect(ledger.count(`${nodeId}/steps[2]`, 'start')).toBe(0);
    const final = await status(workflowId);
    expect(final).toMatchObject({ phase: 'failed', abortReason: 'operator: wrong machine' });
    // After the run, abort through the Update answers why not.
    const late = await handle.executeUpdate('abort', { args: ['again'] }).catch((e: Error) => e);
    expect(late).toBeInstanceOf(Error);
  });

  it('site routing: a vanished agent is re-routed to the next one of the same site; with none connected a site step fails NO_SITE_AGENT at its deadline', async () => {
    // Site S2: agent C (lease holder) has a fresh session but no worker (it vanished), D serves.
    // Another site's agent is connected too, and must never be picked.
    const S2 = 'site_routing';
    const nodeId = newId('node');
    await createNode(t.cp.db, { nodeId, siteId: S2 });
    agents.push(await startEmulatedAgent(t.config, siteAgentQueue(S2, 'node_agent_d'), machine));
    const live = keepSessions(t.cp.db, [
      { nodeId: 'node_agent_c', siteId: S2, role: 'site', taskQueue: siteAgentQueue(S2, 'node_agent_c') },
      { nodeId: 'node_agent_d', siteId: S2, role: 'site', taskQueue: siteAgentQueue(S2, 'node_agent_d') },
    ]);
    sessions.push(live);
    await t.cp.db.bootLease.create({ data: { siteId: S2, holderNodeId: 'node_agent_c', epoch: 1, expiresAt: new Date(Date.now() + 3_600_000) } });
    const workflowId = await storeAndRun(
      { id: 'engine-reroute', version: 1, target: 'metal', steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' }, timeout: '10s' }] },
      nodeId,
    );
    await t.cp.temporal.workflow.getHandle(workflowId).result();
    const done = ledger.entries().filter((e) => e.step === `${nodeId}/steps[0]` && e.event === 'done');
    expect(done.map((e) => e.queue)).toEqual([siteAgentQueue(S2, 'node_agent_d')]);

    // No connected agent at the machine's site (sessions stale): NO_SITE_AGENT at the step's deadline.
    const S3 = 'site_empty';
    const lonely = newId('node');
    await createNode(t.cp.db, { nodeId: lonely, siteId: S3 });
    await t.cp.db.agentSession.create({
      data: {
        nodeId: 'node_agent_stale',
        siteId: S3,
        role: 'site',
        taskQueue: siteAgentQueue(S3, 'node_agent_stale'),
        lastSeenAt: new Date(Date.now() - 60_000),
      },
    });
    const started = Date.now();
    const failing = await storeAndRun(
      { id: 'engine-no-agent', version: 1, target: 'metal', steps: [{ use: 'power.setPower', on: 'site', with: { action: 'on' }, timeout: '3s' }] },
      lonely,
    );
    await until(
      () => status(failing),
      (s) => s.waitingFor?.startsWith('a connected site agent') === true,
      10_000,
      'the wait for an agent',
    );
    const error = await t.cp.temporal.workflow
      .getHandle(failing)
      .result()
      .catch((e: unknown) => e);
    expect((error as WorkflowFailedError).cause).toMatchObject({ type: 'NO_SITE_AGENT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(ledger.entries().filter((e) => e.step.startsWith(`${lonely}/`))).toEqual([]);
  });
});
