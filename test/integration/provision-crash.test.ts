// Crash resumption: the worker process is SIGKILLed in the middle of a step and a new
// one started; the workflow completes and no finished step runs again (the ledger counts
// side effects). The same across a restart of the Temporal dev server itself.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteAgentQueue } from '../../core/agent-queues';
import { repoRoot, type IronflowConfig } from '../../services/config';
import { newId } from '../../services/ids';
import type { ProvisionResult } from '../../core/plan';
import { sealedDataConverter } from '../../services/sealing';
import { startProvision } from '../../profiles/launch';
import { createProfile } from '../../profiles/store';
import { serverSettings, startTemporalServer, type TemporalServer } from '../../stack/temporal-server';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { freePort } from '../helpers/ports';
import { workerProcessEnv } from '../helpers/worker-process';
import { createNode, emulatedRamdiskQueue, keepSessions, Ledger, until } from '../helpers/provision';

const SITE = 'site_crash';
const AGENT = 'node_crash_agent';
let t: TestControlPlane;
let ledger: Ledger;
const sessions: Array<{ stop(): Promise<void> }> = [];
const children = new Set<ChildProcess>();

/** A worker process, answered once it says `until` ("ready"; "standby" when started as one). */
function startWorkerProcess(config: IronflowConfig, nodeId: string, until: 'ready' | 'standby' = 'ready'): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/fixtures/provision-worker.ts')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...workerProcessEnv(config),
      LEDGER_FILE: ledger.file,
      SITE_QUEUE: siteAgentQueue(SITE, AGENT),
      RAMDISK_QUEUE: emulatedRamdiskQueue(nodeId),
      STANDBY: until === 'standby' ? '1' : '',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  return said(child, until);
}

/** Answers `child` once its output has a line `word`; rejects if it exits first. */
function said(child: ChildProcess, word: string): Promise<ChildProcess> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes(word) && resolve(child));
    child.once('exit', (code) => reject(new Error(`worker process exited (${code}) before ${word}: ${stderr.slice(-2000)}`)));
  });
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  children.delete(child);
}

const profile = {
  id: 'crash-resume',
  version: 1,
  target: 'metal',
  steps: [
    { use: 'event.append', with: { message: 'begin' } },
    { use: 'management.setBootDevice', on: 'site', with: { device: 'pxe' }, timeout: '5s' },
    { use: 'inventory.refresh', on: 'ramdisk', timeout: '5s' },
    // Short attempts find the killed worker's attempt fast. A retry waits at most its timeout for
    // a worker to pick it up (then fails): the test's replacement process is loaded beforehand.
    { use: 'disk.wipe', on: 'ramdisk', timeout: '8s', retries: { max: 3, initialInterval: '1s' } },
    { use: 'boot.kexec', on: 'ramdisk', timeout: '5s' },
  ],
  cleanup: [{ use: 'boot.cleanUp', on: 'site', timeout: '5s' }],
};

/** A node whose ramdisk (in the worker process) is up: its session names its queue. */
async function newMachine(): Promise<string> {
  const nodeId = newId('node');
  await createNode(t.cp.db, { nodeId, siteId: SITE });
  sessions.push(keepSessions(t.cp.db, [{ nodeId, siteId: SITE, role: 'ramdisk', taskQueue: emulatedRamdiskQueue(nodeId) }]));
  return nodeId;
}

/** Every step finished exactly once. */
function expectNoStepRanTwice(nodeId: string) {
  const done = ledger.entries().filter((e) => e.step.startsWith(`${nodeId}/`) && e.event === 'done');
  const counts = Object.fromEntries(
    ['steps[1]', 'steps[2]', 'steps[3]', 'steps[4]', 'cleanup[0]'].map((k) => [k, done.filter((e) => e.step === `${nodeId}/${k}`).length]),
  );
  expect(counts).toEqual({ 'steps[1]': 1, 'steps[2]': 1, 'steps[3]': 1, 'steps[4]': 1, 'cleanup[0]': 1 });
}

beforeAll(async () => {
  t = await startTestControlPlane({ worker: false }); // the workers live in child processes
  ledger = new Ledger(path.join(t.config.dataDir, 'ledger.jsonl'));
  sessions.push(keepSessions(t.cp.db, [{ nodeId: AGENT, siteId: SITE, role: 'site', taskQueue: siteAgentQueue(SITE, AGENT) }]));
  await createProfile(t.cp.db, { tenantId: 'root', document: profile, public: false });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const session of sessions) await session.stop();
  await t?.close();
});

describe('crash resumption', () => {
  it('a worker SIGKILLed mid-step: a new one finishes the workflow, no finished step runs again', async () => {
    const nodeId = await newMachine();
    const first = await startWorkerProcess(t.config, nodeId);
    // Loaded and connected, not yet polling: the first process alone runs the steps up to the kill.
    const second = await startWorkerProcess(t.config, nodeId, 'standby');
    const started = await startProvision(t.cp, { tenantId: 'root', nodeId, profileId: 'crash-resume', provisionState: 'deploying' });
    await until(
      () => ledger.count(`${nodeId}/steps[3]`, 'start'),
      (n) => n === 1,
      30_000,
      'the wipe to start',
    );
    expect(ledger.count(`${nodeId}/steps[3]`, 'done')).toBe(0);
    await kill(first);
    second.stdin?.write('go\n');
    await said(second, 'ready');
    const result = (await t.cp.temporal.workflow.getHandle(started.workflowId).result()) as ProvisionResult;
    expect(result.outcome).toBe('succeeded');
    expectNoStepRanTwice(nodeId);
    // The killed attempt of the wipe started again in the new process.
    expect(ledger.count(`${nodeId}/steps[3]`, 'start')).toBe(2);
    // The two processes split the work: the finished steps stayed with the first.
    const pids = new Set(
      ledger
        .entries()
        .filter((e) => e.step.startsWith(`${nodeId}/`) && e.event === 'done')
        .map((e) => (e.data as { pid: number }).pid),
    );
    expect(pids).toEqual(new Set([first.pid, second.pid]));
    expect(await t.cp.db.event.count({ where: { type: 'workflow.step.note', subjectId: nodeId } })).toBe(1);
    await kill(second);
  });

  it('the Temporal dev server restarted mid-step (same database file): the workflow completes, no finished step runs again', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const serverOptions = {
      address,
      namespace: 'default',
      dbFile: path.join(t.config.dataDir, 'temporal-restart.db'),
      ...serverSettings(t.config.temporal),
      logFile: path.join(t.config.dataDir, 'temporal-restart.log'),
    };
    let server: TemporalServer = await startTemporalServer(serverOptions);
    const config = { ...t.config, temporal: { ...t.config.temporal, address } };
    const nodeId = await newMachine();
    let worker = await startWorkerProcess(config, nodeId);
    let connection = await Connection.connect({ address });
    try {
      const started = await startProvision(
        { db: t.cp.db, config, temporal: new Client({ connection, dataConverter: sealedDataConverter(config) }) },
        { tenantId: 'root', nodeId, profileId: 'crash-resume', provisionState: 'deploying' },
      );
      await until(
        () => ledger.count(`${nodeId}/steps[3]`, 'start'),
        (n) => n === 1,
        30_000,
        'the wipe to start',
      );
      await server.stop('SIGKILL');
      await connection.close();
      server = await startTemporalServer(serverOptions);
      // The worker process may have given up on the lost server: start it again if so.
      if (worker.exitCode !== null || worker.signalCode !== null) worker = await startWorkerProcess(config, nodeId);
      connection = await Connection.connect({ address });
      const handle = new Client({ connection, dataConverter: sealedDataConverter(config) }).workflow.getHandle(started.workflowId);
      const result = (await handle.result()) as ProvisionResult;
      expect(result.outcome).toBe('succeeded');
      expectNoStepRanTwice(nodeId);
    } finally {
      await kill(worker).catch(() => undefined);
      await connection.close().catch(() => undefined);
      await server.stop();
    }
  });
});
