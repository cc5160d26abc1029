// The adopt path (spec 004): a machine that already runs its own OS gets our agent installed
// by hand with a pool's adopt token; the REAL node agent joins as a new node of the pool in
// `adopting`; the lifecycle runs the pool's acceptance checks on that agent; all pass →
// `adopted`; one fails → `failed` naming the check (failedFrom adopting, maintenance on). The
// machines are emulated hardware (agent/emulator: their facts, no BMC); the control plane,
// worker, Temporal, agent gateway and node agent are real.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { adoptRunningMachine } from '../../agent/emulator/adopted-os';
import { Machine } from '../../agent/emulator/machine';
import type { NodeAgent } from '../../agent/node/main';
import { AgentLog } from '../../agent/common/log';
import type { AdoptTokenView } from '../../core/schemas/adopt';
import type { MetalNodeView } from '../../core/schemas/metal';
import { startBootSite, until, type BootSite } from '../helpers/boot-site';
import { runCli } from '../helpers/cli';
import { activitiesRun } from '../helpers/history-activities';

type ErrorBody = { error: { code: string; message: string } };

let site: BootSite;
let fleetDir: string;
const agents: NodeAgent[] = [];
let sequence = 0;

beforeAll(async () => {
  site = await startBootSite('metal-adopt');
  fleetDir = mkdtempSync(path.join(inject('runDir'), 'adopt-fleet-'));
}, 60_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await site?.t.close();
});

const api = () => site.t.root;
const pool = async (policy: Record<string, unknown>) =>
  (await api().call<{ id: string }>('POST', '/v1/pools', { tenantId: 'root', siteId: site.siteId, class: `adopt-${++sequence}`, policy })).id;
const mintToken = (poolId: string) => api().call<AdoptTokenView>('POST', '/v1/metal/adopt-tokens', { tenantId: 'root', poolId });
const get = (nodeId: string) => api().call<MetalNodeView>('GET', `/v1/metal/nodes/${nodeId}?tenantId=root`);
const settle = (nodeId: string, state: string) =>
  until(
    `${nodeId} to rest in ${state}`,
    async () => {
      const node = await get(nodeId);
      return node.provisionState === state && node.workflowId === null ? node : undefined;
    },
    60_000,
  );
const eventTypes = async (nodeId: string) => (await site.t.cp.db.event.findMany({ where: { subjectId: nodeId }, orderBy: { seq: 'asc' } })).map((e) => e.type);
const ranActivities = async (workflowId: string) => activitiesRun(await site.t.cp.temporal.workflow.getHandle(workflowId).fetchHistory());

/** An emulated machine running its own OS (no BMC), adopted with `token`: the real node agent joins. */
async function adopt(token: string, gpus: number): Promise<{ nodeId: string; machine: Machine }> {
  sequence += 1;
  const machine = new Machine(
    {
      id: `a${sequence}`,
      uuid: randomUUID(),
      macs: [`02:00:00:88:00:${sequence.toString(16).padStart(2, '0')}`],
      ips: [],
      arch: 'x86_64',
      uefi: true,
      diskBytes: 1024 * 1024,
      gpus,
    },
    { dataDir: fleetDir, bootServerUrl: () => undefined, log: new AgentLog(() => undefined) },
  );
  const agent = await adoptRunningMachine(machine, { server: site.t.cp.url, token, log: new AgentLog(() => undefined) });
  agents.push(agent);
  return { nodeId: agent.identity.current.nodeId, machine };
}

describe('adopting a machine that already runs its OS', () => {
  it("joins as a new node of the pool and moves to adopted once the pool's acceptance checks pass on its agent", async () => {
    const poolId = await pool({
      acceptanceChecks: [
        { name: 'cpus', params: { min: 2 } },
        { name: 'gpus', timeoutSeconds: 120, params: { min: 1, model: 'Emulated' } },
      ],
    });
    const token = await mintToken(poolId);
    expect(token).toMatchObject({ role: 'adopt', poolId, siteId: site.siteId, maxUses: 1 });
    const { nodeId, machine } = await adopt(token.token, 1);

    const adopted = await settle(nodeId, 'adopted');
    expect(adopted).toMatchObject({
      poolId,
      siteId: site.siteId,
      role: 'node',
      lastError: null,
      failedFrom: null,
      maintenance: false,
      bmc: { credentialsSet: false },
    });
    // Its certificate is the node agent's (role node); the token is used up; nobody else joined.
    expect((await site.t.cp.db.nodeCertificate.findMany({ where: { nodeId } })).map((c) => c.role)).toEqual(['node']);
    expect((await site.t.cp.db.joinToken.findUniqueOrThrow({ where: { id: token.id } })).usesLeft).toBe(0);
    expect(await ranActivities(`node:${nodeId}:adopting:1`)).toEqual(['acceptance.check', 'acceptance.check']);
    expect(await eventTypes(nodeId)).toEqual(
      expect.arrayContaining(['node.joined', 'node.provision.adopting', 'node.provision.workflow', 'node.provision.adopted']),
    );
    expect(machine.state).toBe('off'); // no BMC, no reimage: nothing touched the machine but its agent

    // Retiring an adopted machine revokes its identity; there is no BMC to power off and nothing of ours to erase.
    expect((await api().call<MetalNodeView>('POST', `/v1/metal/nodes/${nodeId}/retire`, { tenantId: 'root' })).provisionState).toBe('retiring');
    await settle(nodeId, 'retired');
    expect(await ranActivities(`node:${nodeId}:retiring:2`)).toEqual(['metal.revokeIdentity']);
    expect(await site.t.cp.db.nodeCertificate.count({ where: { nodeId, revokedAt: null } })).toBe(0);
    const revoked = await until(
      'node.identity.revoked',
      async () => (await site.t.cp.db.event.findFirst({ where: { subjectId: nodeId, type: 'node.identity.revoked' } })) ?? undefined,
    );
    expect(revoked.data).toMatchObject({ certificates: 1, credentialsForgotten: false });
  }, 90_000);

  it('moves to failed naming the check that failed (failedFrom adopting, maintenance on); an unknown check is named too', async () => {
    const poolId = await pool({
      acceptanceChecks: [
        { name: 'cpus', params: { min: 2 } },
        { name: 'gpus', params: { min: 1 } },
      ],
    });
    const { nodeId } = await adopt((await mintToken(poolId)).token, 0);
    const failed = await settle(nodeId, 'failed');
    expect(failed).toMatchObject({ failedFrom: 'adopting', maintenance: true, maintenanceSource: 'failure', lastError: { code: 'DRIVER_ERROR' } });
    expect(failed.lastError?.message).toContain('acceptance check gpus failed: 0 GPU(s), the pool wants at least 1');
    // A failed adoption is not recovered into ready: retire (or fix the machine and adopt it again).
    const recover = await api().request<ErrorBody>('POST', `/v1/metal/nodes/${nodeId}/recover`, { tenantId: 'root' });
    expect(recover.status).toBe(409);

    const typo = await pool({ acceptanceChecks: [{ name: 'gpu-burn' }] });
    const { nodeId: other } = await adopt((await mintToken(typo)).token, 1);
    const unknown = await settle(other, 'failed');
    expect(unknown.lastError).toMatchObject({ code: 'UNSUPPORTED' });
    expect(unknown.lastError?.message).toContain('acceptance check gpu-burn is not one this agent runs (cpus, memory, gpus)');
  }, 90_000);

  it('a pool without acceptance checks adopts at the join; an agentless pool adopts nothing; a used token joins nobody else', async () => {
    const plain = await pool({});
    const token = await mintToken(plain);
    const { nodeId } = await adopt(token.token, 0);
    expect(await get(nodeId)).toMatchObject({ provisionState: 'adopted', workflowId: null, role: 'node' });

    const agentless = await pool({ agent: 'none' });
    const refused = await api().request<ErrorBody>('POST', '/v1/metal/adopt-tokens', { tenantId: 'root', poolId: agentless });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('agentless');

    // The CLI writes the bearer to a 0600 file; the token, once used, joins nobody else.
    const out = path.join(mkdtempSync(path.join(inject('runDir'), 'adopt-cli-')), 'token');
    const cli = await runCli(['metal', 'adopt-token', '--pool', plain, '--out', out, '--format', 'json'], {
      apiUrl: site.t.cp.url,
      credential: site.t.cp.rootCredential.bearer,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ role: 'adopt', poolId: plain, tokenFile: out });
    await expect(adopt(token.token, 0)).rejects.toThrow(/no uses left/);
  }, 90_000);
});
