// The failover test of spec 001 ("One active boot server per site"), with two real site
// agents as processes (`ironflow agent site --config FILE`), each with its own data dir, one
// machine on the emulated Redfish BMC, a real control plane and the Temporal dev server.
//
// The active agent is SIGKILLed the moment the BMC has carried out its power cycle (before
// the answer reaches it). The standby is promoted only once the dead agent's lease ran out,
// the cycle step goes on from the standby, which finds the dead agent's record in the
// shared ledger and does not cycle again. Then both agents are down while the next step
// waits (its status names the agent that never picked it up); the first agent back serves
// it and the workflow completes. Every lease move is an event.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlaneClient } from '../../agent/common/control-plane-client';
import { loadIdentity, loadOrCreateKey, type AgentIdentity } from '../../agent/common/identity';
import { RemoteOperationLedger } from '../../agent/site/remote-operation-ledger';
import { IronflowError } from '../../core/errors';
import { RedfishBmcHost, type EmulatedMachine } from '../../agent/emulator/redfish-bmc';
import { BOOT_LEASE_TTL_MS } from '../../core/boot-lease/decide';
import { newId } from '../../services/ids';
import type { ProvisionStatus } from '../../core/plan';
import { startTestControlPlane, type TestControlPlane } from '../helpers/control-plane';
import { until } from '../helpers/provision';
import { startHoldingRun } from '../helpers/shared-bmc-ledger';
import { siteAgentFixture, type SiteAgentFixture } from '../helpers/site-agent';
import { nodeIdOf, spawnSiteAgent, type AgentProcess } from '../helpers/agent-process';
import { seedMachineWithBmc } from '../helpers/machine-with-bmc';

let t: TestControlPlane;
let siteId: string;
let siteToken: string;
let bmcHost: RedfishBmcHost;
const running = new Set<AgentProcess>();

beforeAll(async () => {
  t = await startTestControlPlane();
  const site = await t.root.call<{ id: string }>('POST', '/v1/sites', { tenantId: 'root', kind: 'shared', region: 'lab-1', idempotencyKey: 'failover-site' });
  siteId = site.id;
  siteToken = (await t.root.call<{ token: string }>('POST', `/v1/sites/${siteId}/tokens`, { tenantId: 'root', ttlSeconds: 900, maxUses: 2 })).token;
  bmcHost = await RedfishBmcHost.start();
}, 60_000);

afterAll(async () => {
  for (const agent of running) agent.child.kill('SIGKILL');
  await Promise.all([...running].map((a) => a.exited));
  await bmcHost?.close();
  await t?.close();
});

function start(fixture: SiteAgentFixture, env: Record<string, string> = {}): AgentProcess {
  const agent = spawnSiteAgent(fixture.configFile, env);
  running.add(agent);
  void agent.exited.then(() => running.delete(agent));
  return agent;
}

const dataDirOf = (fixture: SiteAgentFixture) => path.join(fixture.dir, 'data');

interface LeaseRow {
  holderNodeId: string | null;
  epoch: number;
  expiresAt: Date | null;
}
const leaseRow = async (): Promise<LeaseRow> =>
  (await t.cp.db.bootLease.findUnique({ where: { siteId } })) ?? { holderNodeId: null, epoch: 0, expiresAt: null };

const agentA = () => fixtures[0] as SiteAgentFixture;
let fixtures: SiteAgentFixture[] = [];

describe('the site agent as a process', () => {
  it('joins with IRONFLOW_JOIN_TOKEN, holds the lease, and stops cleanly on SIGTERM', async () => {
    fixtures = [siteAgentFixture(t.cp.url), siteAgentFixture(t.cp.url)];
    const agent = start(agentA(), { IRONFLOW_JOIN_TOKEN: siteToken });
    await agent.waitForLog('site agent running');
    const nodeId = nodeIdOf(dataDirOf(agentA()));
    expect(await t.cp.db.event.count({ where: { type: 'node.joined', subjectId: nodeId } })).toBe(1);
    const active = await agent.waitForLog('holding the boot lease: active boot server', 30_000);
    const lease = await leaseRow();
    expect(lease).toMatchObject({ holderNodeId: nodeId, epoch: active.epoch });
    expect(lease.epoch).toBeGreaterThanOrEqual(1);
    const shown = await t.root.call<{ agents: Array<{ nodeId: string; connected: boolean }>; bootLease: { holderNodeId: string; epoch: number } }>(
      'GET',
      `/v1/sites/${siteId}?tenantId=root`,
    );
    expect(shown.agents).toEqual([expect.objectContaining({ nodeId, connected: true })]);
    expect(shown.bootLease).toMatchObject({ holderNodeId: nodeId, epoch: lease.epoch });
    // The token never reaches the log.
    expect(agent.lines.join('\n')).not.toContain(siteToken.split('.')[1]);

    const asked = Date.now();
    agent.child.kill('SIGTERM');
    const exit = await agent.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - asked).toBeLessThan(10_000);
    expect(agent.entries()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ message: 'stopping', signal: 'SIGTERM' }),
        expect.objectContaining({ message: 'site agent stopped', nodeId }),
      ]),
    );
  }, 90_000);
});

/**
 * The BMC network between the agents and the emulated BMC: it passes requests through,
 * and lets the test act at the moment a command reached the BMC.
 */
interface BmcNetwork {
  url: string;
  resets: number;
  patches: number;
  /** Called once the BMC carried out the first power cycle; its answer is then dropped. */
  onFirstReset?: () => void;
  /** The first boot-device PATCH is held here (not passed on) until dropped. */
  held?: http.ServerResponse;
  close(): Promise<void>;
}

async function bmcNetwork(upstream: string): Promise<BmcNetwork> {
  const network: BmcNetwork = { url: '', resets: 0, patches: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const isReset = req.method === 'POST' && (req.url ?? '').endsWith('ComputerSystem.Reset');
      const isPatch = req.method === 'PATCH';
      if (isReset) network.resets++;
      if (isPatch && ++network.patches === 1) {
        network.held = res;
        return;
      }
      const forward = http.request(new URL(req.url ?? '/', upstream), { method: req.method, headers: req.headers }, (answer) => {
        if (isReset && network.resets === 1 && network.onFirstReset) {
          answer.resume();
          answer.on('end', () => {
            network.onFirstReset?.();
            req.socket.destroy();
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  network.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  network.close = () => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  };
  return network;
}

describe('failover between two site agents', () => {
  let network: BmcNetwork;
  let machine: EmulatedMachine;
  const boots: string[] = [];
  afterAll(async () => network?.close());

  it('reuses the dead agent’s power cycle, promotes the standby only after the lease ran out, waits with both agents down, and completes on the first agent back', async () => {
    machine = bmcHost.add({
      id: 'fo1',
      uuid: '5b0e6a1c-0000-4000-8000-0000000000f1',
      macs: ['52:54:00:00:0f:01'],
      username: 'root',
      password: 'failover-pw',
      powerState: 'On',
    });
    bmcHost.on('boot', (e) => e.machineId === 'fo1' && boots.push(e.device));
    network = await bmcNetwork(bmcHost.url);
    const nodeId = await seedMachineWithBmc(t.cp, siteId, { address: `${network.url}/redfish/v1/Systems/fo1`, username: 'root', password: 'failover-pw' });

    // Both agents up: the first one again (same data dir, no token: no second join), and a new one.
    const processes = [start(fixtures[0] as SiteAgentFixture), start(fixtures[1] as SiteAgentFixture, { IRONFLOW_JOIN_TOKEN: siteToken })];
    await Promise.all(processes.map((p) => p.waitForLog('site agent running')));
    const ids = fixtures.map((f) => nodeIdOf(dataDirOf(f)));
    const connected = async () =>
      (await t.cp.db.agentSession.findMany({ where: { siteId } })).filter((s) => Date.now() - s.lastSeenAt.getTime() < 5_000).length;
    await until(connected, (n) => n === 2, 20_000, 'both agents connected');
    const holding = await until(
      leaseRow,
      (l) => l.holderNodeId !== null && ids.includes(l.holderNodeId) && (l.expiresAt?.getTime() ?? 0) > Date.now(),
      30_000,
      'a live lease',
    );
    const activeIndex = ids.indexOf(holding.holderNodeId as string);
    const standbyIndex = 1 - activeIndex;
    const [activeId, standbyId] = [ids[activeIndex] as string, ids[standbyIndex] as string];
    const active = processes[activeIndex] as AgentProcess;
    const standby = processes[standbyIndex] as AgentProcess;

    // Kill the active agent abruptly the moment the BMC has carried out its power cycle.
    let killedAt = 0;
    network.onFirstReset = () => {
      active.child.kill('SIGKILL');
      killedAt = Date.now();
    };
    await t.root.call('POST', '/v1/profiles', {
      tenantId: 'root',
      document: {
        id: 'failover-boot',
        version: 1,
        target: 'metal',
        steps: [
          { use: 'power.setPower', on: 'site', with: { action: 'cycle' }, timeout: '30s', retries: { max: 3, initialInterval: '1s' } },
          { use: 'management.setBootDevice', on: 'site', with: { device: 'pxe' }, timeout: '80s', retries: { max: 10, initialInterval: '1s' } },
        ],
      },
    });
    const started = await t.root.call<{ workflowId: string }>('POST', '/v1/profiles/failover-boot/runs', {
      tenantId: 'root',
      nodeId,
      provisionState: 'inspecting',
    });
    const workflowId = started.workflowId;

    // Watch the lease while the dead agent still holds it: the latest expiry it ever had.
    await until(
      () => killedAt,
      (v) => v > 0,
      30_000,
      'the power cycle to reach the BMC',
    );
    await active.exited;
    let deadLeaseExpiry = 0;
    const promoted = await until(
      async () => {
        const row = await leaseRow();
        if (row.holderNodeId === activeId) deadLeaseExpiry = Math.max(deadLeaseExpiry, row.expiresAt?.getTime() ?? 0);
        return row;
      },
      (row) => row.holderNodeId === standbyId,
      2 * BOOT_LEASE_TTL_MS + 15_000,
      'the standby to be promoted',
    );
    expect(promoted.epoch).toBe(holding.epoch + 1);
    const promotion = await t.cp.db.event.findFirstOrThrow({
      where: { type: 'site.boot-lease.promoted', subjectId: siteId, createdAt: { gte: new Date(killedAt - 1_000) } },
    });
    expect(promotion.data).toMatchObject({ holderNodeId: standbyId, previousHolderNodeId: activeId, epoch: promoted.epoch });
    // Never earlier than the dead agent's lease ran out, and that lease never outlived its last heartbeat by more than renew + TTL.
    expect(deadLeaseExpiry).toBeGreaterThan(0);
    expect(promotion.createdAt.getTime()).toBeGreaterThanOrEqual(deadLeaseExpiry);
    const becameActive = await standby.waitForLog('holding the boot lease: active boot server', 15_000);
    expect(Date.parse(becameActive.time as string)).toBeGreaterThanOrEqual(deadLeaseExpiry);
    expect(becameActive.epoch).toBe(promoted.epoch);
    expect(deadLeaseExpiry).toBeLessThanOrEqual(killedAt + 2 * BOOT_LEASE_TTL_MS + 1_000);

    // The cycle step went on from the standby, which read the dead agent's record and did not cycle again.
    const cycleOp = await t.cp.db.bmcOperation.findFirstOrThrow({ where: { workflowId, command: 'power.set(cycle)' } });
    expect(cycleOp).toMatchObject({ nodeId, siteId, agentNodeId: activeId, state: 'sent' });
    await until(
      () => network.held,
      (h) => h !== undefined,
      60_000,
      'the boot-device step to reach the BMC',
    );
    const grants = async () =>
      (await t.cp.db.event.findMany({ where: { type: 'security.bmc-access.granted', subjectId: nodeId }, orderBy: { seq: 'asc' } })).map(
        (e) => (e.data as { agentNodeId: string }).agentNodeId,
      );
    expect(await grants()).toEqual([activeId, standbyId, standbyId]); // cycle on the active agent, cycle and boot device on the standby
    expect(standby.lines.some((l) => l.includes('power command outcome unknown and not safe to resend'))).toBe(true);
    expect(network.resets).toBe(1);
    expect(boots).toEqual(['disk']); // one power-on: the machine was cycled once

    // Now the standby dies too, in the middle of the boot-device step: the step waits.
    standby.child.kill('SIGKILL');
    await standby.exited;
    network.held?.socket?.destroy();
    const waiting = await until(
      async () => (await t.root.call<{ status: ProvisionStatus }>('GET', `/v1/workflows/${encodeURIComponent(workflowId)}?tenantId=root`)).status,
      (s) => (s.waitingFor ?? '').includes(standbyId),
      60_000,
      'the step to wait for a site agent',
    );
    expect(waiting.step).toMatchObject({ key: 'steps[1]', use: 'management.setBootDevice' });
    expect(waiting.waitingFor).toContain(`a connected site agent of site ${siteId}`);
    expect(waiting.history).toEqual([{ key: 'steps[0]', use: 'power.setPower', outcome: 'succeeded' }]);

    // The first agent back (the one killed first, same data dir: no rejoin) serves it.
    const back = start(fixtures[activeIndex] as SiteAgentFixture);
    await back.waitForLog('site agent running');
    const result = await t.cp.temporal.workflow.getHandle(workflowId).result();
    expect(result.history).toEqual([
      { key: 'steps[0]', use: 'power.setPower', outcome: 'succeeded' },
      { key: 'steps[1]', use: 'management.setBootDevice', outcome: 'succeeded' },
    ]);
    expect(machine.bootTarget).toBe('Pxe');
    expect((await grants()).at(-1)).toBe(activeId);
    expect(await t.cp.db.event.count({ where: { type: 'node.joined', subjectId: activeId } })).toBe(1);
    expect(network.resets).toBe(1);
    expect(boots).toEqual(['disk']);

    // The lease goes back to the agent that came back; every move is an event.
    await until(
      leaseRow,
      (l) => l.holderNodeId === activeId && l.epoch > promoted.epoch,
      2 * BOOT_LEASE_TTL_MS + 15_000,
      'the lease for the agent that came back',
    );
    const moves = await t.cp.db.event.findMany({ where: { subjectId: siteId, type: { startsWith: 'site.boot-lease.' } }, orderBy: { seq: 'asc' } });
    const epochs = moves.map((m) => (m.data as { epoch: number }).epoch);
    expect(epochs).toEqual([...epochs].sort((a, b) => a - b));
    expect(new Set(epochs).size).toBe(epochs.length);
    expect(moves.map((m) => m.type)).toEqual(expect.arrayContaining(['site.boot-lease.acquired', 'site.boot-lease.promoted']));
    expect(moves.at(-1)?.data).toMatchObject({ holderNodeId: activeId });
    // No agent log holds the BMC password (and each agent did log: an empty log proves nothing).
    for (const p of [active, standby, back]) {
      expect(p.lines.length).toBeGreaterThan(0);
      expect(p.lines.join('\n')).not.toContain('failover-pw');
    }
  }, 240_000);
});

describe('the shared BMC operation ledger', () => {
  it('serves a site agent only for a running step of a machine at its site, and refuses a write over a newer record', async () => {
    const identities = fixtures.map((f) => loadIdentity(dataDirOf(f), loadOrCreateKey(dataDirOf(f))) as AgentIdentity);
    const [first, second] = identities as [AgentIdentity, AgentIdentity];
    const client = new ControlPlaneClient(t.cp.url);
    const { nodeId, workflowId, handle } = await startHoldingRun(t, siteId);
    try {
      const step = { workflowId, target: { nodeId } };
      const operationId = `${workflowId}/steps.0./power.set.cycle`;
      const started = { operationId, kind: 'power.set(cycle)', bmc: 'redfish:http://bmc/1', state: 'started' as const, startedAt: new Date().toISOString() };

      // Two agents read "none"; only the first may record that it sends.
      const a = new RemoteOperationLedger(client, first, step);
      const b = new RemoteOperationLedger(client, second, step);
      expect(await a.get(operationId)).toBeNull();
      expect(await b.get(operationId)).toBeNull();
      await a.put(started);
      await expect(b.put(started)).rejects.toMatchObject({ code: 'CONFLICT' });
      // The other agent sees the first one's record, and a fresh read lets it write on.
      const c = new RemoteOperationLedger(client, second, step);
      expect(await c.get(operationId)).toMatchObject({ state: 'started', kind: 'power.set(cycle)' });
      await a.put({ ...started, state: 'succeeded', result: { done: true }, finishedAt: new Date().toISOString() });
      expect(await c.get(operationId)).toMatchObject({ state: 'succeeded', result: { done: true } });
      // The same command under another kind is a conflict, not an overwrite.
      await expect(c.put({ ...started, kind: 'power.set(on)' })).rejects.toMatchObject({ code: 'CONFLICT' });

      const ask = (body: object) =>
        client.signedPost(first, '/v1/agents/bmc-operations/get', body).then(
          () => 'allowed',
          (e: IronflowError) => e.code,
        );
      expect(await ask({ nodeId, workflowId, operationId })).toBe('allowed');
      // Another workflow's operation id, a workflow that is not running, another site's machine.
      expect(await ask({ nodeId, workflowId, operationId: `node:${nodeId}:other:1/steps.0./power.set.cycle` })).toBe('PERMISSION_DENIED');
      expect(await ask({ nodeId, workflowId: `node:${nodeId}:gone:1`, operationId: `node:${nodeId}:gone:1/steps.0./power.set.cycle` })).toBe(
        'PERMISSION_DENIED',
      );
      const other = await t.root.call<{ id: string }>('POST', '/v1/sites', {
        tenantId: 'root',
        kind: 'shared',
        region: 'lab-2',
        idempotencyKey: 'failover-other-site',
      });
      const elsewhere = newId('node');
      await t.cp.db.node.create({ data: { id: elsewhere, tenantId: 'root', siteId: other.id, role: 'host' } });
      expect(await ask({ nodeId: elsewhere, workflowId: `node:${elsewhere}:x:1`, operationId: `node:${elsewhere}:x:1/s/c` })).toBe('NOT_FOUND');
      const refusals = await t.cp.db.event.findMany({ where: { type: 'security.bmc-operation.refused' } });
      expect(refusals.map((e) => (e.data as { reason: string }).reason)).toEqual(
        expect.arrayContaining(['operation-of-another-workflow', 'workflow-not-running', 'node-not-at-site']),
      );
      // A credential that is not an agent's signature gets nothing.
      const unsigned = await fetch(new URL('/v1/agents/bmc-operations/get', t.cp.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ nodeId, workflowId, operationId }),
      });
      expect(unsigned.status).toBe(401);
    } finally {
      await handle.terminate('test done');
    }
  }, 60_000);
});
