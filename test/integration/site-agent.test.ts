// The site agent against a real control plane (API, database, Temporal dev server): it
// joins with a site token from its token file, holds the boot lease, keeps its identity
// across restarts, renews its certificate, runs power.setPower steps of real provision
// workflows against the emulated Redfish BMC and sushy-tools, never resends a power cycle
// on retry, refuses non-site activities, and fences itself when the control plane goes.
import { statSync, writeFileSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBmcDriver, waitForPower } from '../../agent/bmc';
import { RedfishBmcHost } from '../../agent/emulator/redfish-bmc';
import type { SiteAgent } from '../../agent/site/main';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { IronflowError } from '../../core/errors';
import { newId } from '../../services/ids';
import type { Plan } from '../../core/plan';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { siteAgentFixture, type SiteAgentFixture } from '../helpers/site-agent';
import { startSushy, type RunningSushy } from '../helpers/sushy';
import { until } from '../helpers/provision';
import { runCli } from '../helpers/cli';
import { seedMachineWithBmc, type SeededBmc } from '../helpers/machine-with-bmc';

let t: TestControlPlane;
let siteId: string;
let fixture: SiteAgentFixture;
let agent: SiteAgent | undefined;
let bmcHost: RedfishBmcHost;
let cpClosed = false;

beforeAll(async () => {
  t = await startTestControlPlane();
  const site = await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-1', idempotencyKey: 'site-agent-site' });
  siteId = site.id;
  const minted = await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 600 });
  fixture = siteAgentFixture(t.cp.url, { renewAfter: '3s' });
  writeFileSync(path.join(fixture.dir, 'site-token'), minted.token, { mode: 0o600 });
  bmcHost = await RedfishBmcHost.start();
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await bmcHost?.close();
  if (!cpClosed) await t?.close();
});

const machineWithBmc = (bmc: SeededBmc): Promise<string> => seedMachineWithBmc(t.cp, siteId, bmc);

async function runPowerProfile(
  nodeId: string,
  action: string,
  id: string,
): Promise<{ workflowId: string; result: { history: Array<{ key: string; outcome: string }> } }> {
  await t.root.call('POST', '/v1/profiles', {
    tenantId: 'root',
    document: {
      id,
      version: 1,
      target: 'metal',
      steps: [{ use: 'power.setPower', on: 'site', with: { action }, timeout: '40s', retries: { max: 3, initialInterval: '1s' } }],
    },
  });
  const started = await t.root.call<{ workflowId: string }>('POST', `/v1/profiles/${id}/runs`, { tenantId: 'root', nodeId, provisionState: 'inspecting' });
  const result = await t.cp.temporal.workflow.getHandle(started.workflowId).result();
  return { workflowId: started.workflowId, result };
}

let joinedCertificate = '';

describe('the site agent', () => {
  it('joins with its token file, appears connected with role site and holds the lease', async () => {
    agent = await fixture.start();
    joinedCertificate = agent.identity.certificatePem();
    const nodeId = agent.identity.current.nodeId;
    expect(agent.identity.current).toMatchObject({ role: 'site', siteId });
    expect(agent.identity.current.temporal.taskQueue).toBe(`site.${siteId}.${nodeId}`);
    expect(statSync(path.join(fixture.dir, 'data', 'agent.key')).mode & 0o777).toBe(0o600);
    const session = await t.cp.db.agentSession.findUnique({ where: { nodeId } });
    expect(session).toMatchObject({ role: 'site', siteId });
    const state = await until(
      () => agent!.session.state(),
      (s) => s.active,
      20_000,
      'the boot lease',
    );
    expect(state).toMatchObject({ connected: true, active: true, holderNodeId: nodeId });
    expect(state.epoch).toBeGreaterThanOrEqual(1);
    // sites.get (API and CLI) shows the agent, connected, holding the lease at that epoch.
    const shown = await t.root.call<{
      agents: Array<{ nodeId: string; connected: boolean; bootServer: boolean }>;
      bootLease: { holderNodeId: string; epoch: number };
    }>('GET', `/v1/sites/${siteId}?tenantId=root`);
    expect(shown.agents).toEqual([expect.objectContaining({ nodeId, connected: true, bootServer: true })]);
    expect(shown.bootLease).toMatchObject({ holderNodeId: nodeId, epoch: state.epoch });
    const cli = await runCli(['sites', 'get', siteId, '--tenant', 'root', '--format', 'json'], { apiUrl: t.cp.url, credential: t.cp.rootCredential.bearer });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ agents: [{ nodeId, connected: true }], bootLease: { holderNodeId: nodeId, epoch: state.epoch } });
    // The token never reaches the agent's log.
    const token = readFileSync(path.join(fixture.dir, 'site-token'), 'utf8');
    expect(fixture.lines.join('\n')).not.toContain(token.split('.')[1]);
  }, 40_000);

  it('restarts without joining again: same key, same node id', async () => {
    const nodeId = agent!.identity.current.nodeId;
    const keyBefore = readFileSync(path.join(fixture.dir, 'data', 'agent.key'), 'utf8');
    await agent!.stop();
    writeFileSync(path.join(fixture.dir, 'site-token'), 'ifjt_jt_spent.not-a-token'); // a rejoin would fail
    agent = await fixture.start();
    expect(agent.identity.current.nodeId).toBe(nodeId);
    expect(readFileSync(path.join(fixture.dir, 'data', 'agent.key'), 'utf8')).toBe(keyBefore);
    const joins = await t.cp.db.event.count({ where: { type: 'node.joined', subjectId: nodeId } });
    expect(joins).toBe(1);
    await until(
      () => agent!.session.state(),
      (s) => s.active,
      20_000,
      'the lease after restart',
    );
  }, 40_000);

  it('renews its certificate before renewAfter ([certificate] renew_after) and signs with the new one', async () => {
    // Compared with the certificate of the join: with renew_after = 3s a renewal may have
    // happened during the previous test already.
    await until(
      () => agent!.renewer.renewals,
      (n) => n >= 1,
      20_000,
      'a renewal',
    );
    expect(agent!.identity.certificatePem()).not.toBe(joinedCertificate);
    expect(readFileSync(path.join(fixture.dir, 'data', 'certificate.pem'), 'utf8')).toContain(agent!.identity.certificatePem().trim());
    const renewed = await t.cp.db.event.count({ where: { type: 'node.certificate.renewed', subjectId: agent!.identity.current.nodeId } });
    expect(renewed).toBeGreaterThanOrEqual(1);
    // Heartbeats go on with the new certificate.
    const seen = (await t.cp.db.agentSession.findUniqueOrThrow({ where: { nodeId: agent!.identity.current.nodeId } })).lastSeenAt.getTime();
    await until(
      async () => (await t.cp.db.agentSession.findUniqueOrThrow({ where: { nodeId: agent!.identity.current.nodeId } })).lastSeenAt.getTime(),
      (v) => v > seen,
      15_000,
      'a heartbeat',
    );
  }, 40_000);

  it('runs power.setPower of a provision workflow against the emulated Redfish BMC, with BMC access granted per step', async () => {
    const machine = bmcHost.add({
      id: 'm1',
      uuid: '5b0e6a1c-0000-4000-8000-000000000001',
      macs: ['52:54:00:00:00:01'],
      username: 'root',
      password: 'emulated-pw-1',
      powerState: 'Off',
    });
    const nodeId = await machineWithBmc({ address: `${bmcHost.url}/redfish/v1/Systems/m1`, username: 'root', password: 'emulated-pw-1' });
    const { workflowId, result } = await runPowerProfile(nodeId, 'on', 'site-agent-power-on');
    expect(result.history).toEqual([{ key: 'steps[0]', use: 'power.setPower', outcome: 'succeeded' }]);
    expect(machine.powerState).toBe('On');
    const events = await t.cp.db.event.findMany({ where: { type: 'security.bmc-access.granted', subjectId: nodeId } });
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ workflowId, agentNodeId: agent!.identity.current.nodeId });
    expect(JSON.stringify(events)).not.toContain('emulated-pw-1');
    expect(fixture.lines.join('\n')).not.toContain('emulated-pw-1');
  }, 60_000);

  it('does not send a power cycle twice when its answer is lost (read back from the BMC, not sent again)', async () => {
    const machine = bmcHost.add({
      id: 'm2',
      uuid: '5b0e6a1c-0000-4000-8000-000000000002',
      macs: ['52:54:00:00:00:02'],
      username: 'root',
      password: 'emulated-pw-2',
      powerState: 'On',
    });
    // The BMC network drops the connection after the first reset reached the BMC.
    let resets = 0;
    const flaky = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const isReset = req.method === 'POST' && (req.url ?? '').endsWith('ComputerSystem.Reset');
        if (isReset) resets++;
        const upstream = http.request(new URL(req.url ?? '/', bmcHost.url), { method: req.method, headers: req.headers }, (answer) => {
          if (isReset && resets === 1) {
            answer.resume();
            answer.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', () => r()));
    try {
      const nodeId = await machineWithBmc({
        address: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/redfish/v1/Systems/m2`,
        username: 'root',
        password: 'emulated-pw-2',
      });
      const { result } = await runPowerProfile(nodeId, 'cycle', 'site-agent-power-cycle');
      expect(result.history).toEqual([{ key: 'steps[0]', use: 'power.setPower', outcome: 'succeeded' }]);
      expect(resets).toBe(1);
      expect(machine.powerState).toBe('On');
      // One attempt: the lost answer was read back from the BMC's LastResetTime within it
      // (agent/bmc/reliable.ts), so the step neither failed nor sent the cycle again. A BMC
      // that cannot prove a reset leaves the outcome unknown, and the ledger never resends it
      // (test/integration/bmc-flaky.test.ts).
      expect(await t.cp.db.event.count({ where: { type: 'security.bmc-access.granted', subjectId: nodeId } })).toBe(1);
    } finally {
      await new Promise<void>((r) => flaky.close(() => r()));
    }
  }, 60_000);

  it('grants BMC access only for a running workflow of a machine at its own site', async () => {
    const client = new ControlPlaneClient(t.cp.url);
    const ask = (body: object) =>
      client.signedPost(agent!.identity, '/v1/agents/bmc-access', body).then(
        () => 'granted',
        (e: IronflowError) => e.code,
      );
    const nodeId = await machineWithBmc({ address: `${bmcHost.url}/redfish/v1/Systems/m1`, username: 'root', password: 'emulated-pw-1' });
    expect(await ask({ nodeId, workflowId: `node:${nodeId}:inspecting:1` })).toBe('PERMISSION_DENIED'); // no such workflow
    const finished = (await t.cp.db.event.findFirstOrThrow({ where: { type: 'security.bmc-access.granted' } })).data as { workflowId: string };
    expect(await ask({ nodeId, workflowId: finished.workflowId })).toBe('PERMISSION_DENIED'); // another machine's, and finished
    const other = await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-2', idempotencyKey: 'other-site' });
    const elsewhere = newId('node');
    await t.cp.db.node.create({ data: { id: elsewhere, tenantId: 'root', siteId: other.id, role: 'host' } });
    expect(await ask({ nodeId: elsewhere, workflowId: `node:${elsewhere}:x:1` })).toBe('NOT_FOUND');
    const refusals = await t.cp.db.event.findMany({ where: { type: 'security.bmc-access.refused' } });
    expect(refusals.map((e) => (e.data as { reason: string }).reason)).toEqual(expect.arrayContaining(['workflow-not-running', 'node-not-at-site']));
  }, 30_000);

  describe('against sushy-tools', () => {
    let sushy: RunningSushy;
    const system = { uuid: '3f9d7a52-1b6e-4c0a-9f1d-2e3a4b5c6d7e', name: 'sushy-node', macs: [{ mac: '52:54:00:aa:cc:01' }] };
    beforeAll(async () => {
      sushy = await startSushy({ systems: [system] });
    }, 40_000);
    afterAll(async () => sushy?.close());

    it('runs power.setPower on', async () => {
      const nodeId = await machineWithBmc({ address: `${sushy.url}/redfish/v1/Systems/${system.uuid}`, username: sushy.username, password: sushy.password });
      const { result } = await runPowerProfile(nodeId, 'on', 'site-agent-sushy-on');
      expect(result.history).toEqual([{ key: 'steps[0]', use: 'power.setPower', outcome: 'succeeded' }]);
      const driver = createBmcDriver({ driver: 'redfish', address: sushy.url, systemId: system.uuid }, { username: sushy.username, password: sushy.password });
      try {
        await waitForPower(driver, 'on', { timeoutMs: 20_000 });
      } finally {
        await driver.close();
      }
    }, 60_000);
  });

  it('refuses an activity that is not a site step kind', async () => {
    const nodeId = await machineWithBmc({ address: `${bmcHost.url}/redfish/v1/Systems/none`, username: 'x', password: 'y' });
    const plan: Plan = {
      profile: { tenantId: 'root', id: 'hand-made', version: 1, ref: 'hand-made@1' },
      target: 'metal',
      role: 'host',
      steps: [
        {
          key: 'steps[0]',
          use: 'disk.wipe',
          activity: 'disk.wipe',
          queue: 'site',
          route: 'site-agent',
          with: { mode: 'quick' },
          timeoutMs: 20_000,
          scheduleToStartMs: 5_000,
          retry: { maximumAttempts: 3, initialIntervalMs: 200, backoffCoefficient: 1, maximumIntervalMs: 200 },
          onFailure: 'fail',
        },
      ],
      acceptance: [],
      cleanup: [],
    };
    const handle = await t.cp.temporal.workflow.start('provision', {
      workflowId: `node:${nodeId}:refusal:1`,
      taskQueue: t.config.controlQueue,
      args: [plan, { tenantId: 'root', nodeId, siteId, provisionState: 'inspecting', labels: {} }],
    });
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type, (cause as ApplicationFailure).message).toBe('UNSUPPORTED');
    expect((cause as ApplicationFailure).message).toContain('disk.wipe is not a site step kind');
  }, 40_000);

  it('fences itself within the lease TTL when the control plane stops answering', async () => {
    await until(
      () => agent!.session.state(),
      (s) => s.active,
      20_000,
      'the lease',
    );
    await t.close();
    cpClosed = true;
    const stoppedAt = Date.now();
    await until(
      () => agent!.session.state(),
      (s) => !s.active,
      20_000,
      'fencing',
    );
    // Never later than the TTL; earlier when the lease it was told of runs out first.
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(15_000 + 500);
    await until(
      () => agent!.session.state(),
      (s) => !s.connected,
      20_000,
      'the session to lapse',
    );
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(15_000 + 500);
    expect(agent!.session.state().active).toBe(false);
    // The log follows the state within the session's next evaluation (250 ms).
    await until(
      () => fixture.lines.some((l) => l.includes('"fenced: ')),
      (logged) => logged,
      2_000,
      'the fencing log line',
    );
  }, 40_000);
});
